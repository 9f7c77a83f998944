// Package commands assembles the osb command tree and runs it: flags, the
// mapping of errors to exit codes, and how errors are shown.
package commands

import (
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/osb-dev/osb/internal/build"
	"github.com/osb-dev/osb/internal/cmdutil"
	codecmd "github.com/osb-dev/osb/internal/commands/code"
	"github.com/osb-dev/osb/internal/commands/command"
	configcmd "github.com/osb-dev/osb/internal/commands/config"
	"github.com/osb-dev/osb/internal/commands/cp"
	"github.com/osb-dev/osb/internal/commands/credentialvault"
	"github.com/osb-dev/osb/internal/commands/devops"
	"github.com/osb-dev/osb/internal/commands/diagnostics"
	"github.com/osb-dev/osb/internal/commands/egress"
	"github.com/osb-dev/osb/internal/commands/file"
	mcpcmd "github.com/osb-dev/osb/internal/commands/mcp"
	"github.com/osb-dev/osb/internal/commands/sandbox"
	servercmd "github.com/osb-dev/osb/internal/commands/server"
	"github.com/osb-dev/osb/internal/commands/skills"
	"github.com/osb-dev/osb/internal/commands/snapshot"
	"github.com/osb-dev/osb/internal/commands/template"
	"github.com/osb-dev/osb/internal/ops"
)

// NewCmdRoot builds the whole command tree over f.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	root := newBareRoot(f)
	addAll(root, f)
	return root
}

func addAll(root *cobra.Command, f *cmdutil.Factory) {
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		root.AddCommand(groups[name](f))
	}
	addHelpTopics(root)
	root.AddCommand(newCmdCompletion(f), newCmdVersion(f))
	strictHelp(root)
}

// newBareRoot is osb with its flags and hooks and no commands under it.
func newBareRoot(f *cmdutil.Factory) *cobra.Command {
	var noColor, proxy, noProxy bool
	root := &cobra.Command{
		Use:           "osb",
		Short:         "OpenSandbox CLI — manage sandboxes from your terminal.",
		Long:          "OpenSandbox CLI — manage sandboxes from your terminal.\n\nRun 'osb server' for a local OpenSandbox-compatible server, 'osb shell SANDBOX_ID' for\na shell in a sandbox, and 'osb help exit-codes' for what each exit code means.",
		Version:       build.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cmdutil.KnownSubcommand,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(f.IOStreams.Out)
			_ = cmd.Help()
			return ops.Silent(ops.ExitUsage)
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Name() == cobra.ShellCompRequestCmd {
				completeIDs(cmd.Root(), f)
			}
			if noColor {
				f.IOStreams.DisableColor()
			}
			if f.Getenv("NO_COLOR") != "" {
				f.IOStreams.DisableANSI()
			}
			switch {
			case proxy && noProxy:
				return ops.FlagErrorf("--use-server-proxy and --no-use-server-proxy cannot be used together")
			case proxy || noProxy:
				f.Flags.UseServerProxy = &proxy
			}
			if f.Flags.RequestTimeout < 0 {
				return ops.FlagErrorf("--request-timeout must not be negative")
			}
			if f.Flags.IdleTimeout < 0 {
				return ops.FlagErrorf("--idle-timeout must not be negative")
			}
			if cmdutil.SkipsConfig(cmd) {
				return nil
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if !cfg.Color {
				f.IOStreams.DisableColor()
			}
			return nil
		},
	}
	root.SetVersionTemplate(versionText())
	root.SetFlagErrorFunc(cmdutil.UnknownFlag)

	pf := root.PersistentFlags()
	pf.StringVar(&f.Flags.APIKey, "api-key", "", "API key for authentication (env OPEN_SANDBOX_API_KEY).")
	pf.StringVar(&f.Flags.Domain, "domain", "", "API server domain, e.g. localhost:8080 (env OPEN_SANDBOX_DOMAIN).")
	cmdutil.PersistentEnumFlag(root, &f.Flags.Protocol, "protocol", "", []string{"http", "https"}, "Protocol (http/https).")
	pf.IntVar(&f.Flags.RequestTimeout, "request-timeout", 0, "Request timeout in seconds.")
	pf.IntVar(&f.Flags.IdleTimeout, "idle-timeout", 0, "Seconds a stream or a transfer may go without data before osb gives up (default 60).")
	pf.BoolVar(&proxy, "use-server-proxy", false, "Route execd and endpoint traffic through the sandbox server proxy.")
	pf.BoolVar(&noProxy, "no-use-server-proxy", false, "Reach sandboxes directly, not through the server proxy.")
	pf.StringVar(&f.Flags.ConfigPath, "config", "", "Config file path (default ~/.opensandbox/config.toml).")
	pf.BoolVarP(&f.Verbose, "verbose", "v", false, "Log each HTTP request to stderr.")
	pf.BoolVar(&noColor, "no-color", false, "Disable colored output.")
	root.Flags().Bool("version", false, "Show the version and exit.")
	return root
}

// groups are the command groups under osb, by name, so that a command line
// that starts with one builds only that group (see newRunRoot); a test
// checks each name is the one its group is built with.
var groups = map[string]func(*cmdutil.Factory) *cobra.Command{
	"code":             codecmd.NewCmdCode,
	"command":          command.NewCmdCommand,
	"config":           configcmd.NewCmdConfig,
	"cp":               cp.NewCmdCp,
	"credential-vault": credentialvault.NewCmdCredentialVault,
	"devops":           devops.NewCmdDevops,
	"diagnostics":      diagnostics.NewCmdDiagnostics,
	"egress":           egress.NewCmdEgress,
	"file":             file.NewCmdFile,
	"mcp":              mcpcmd.NewCmdMCP,
	"sandbox":          sandbox.NewCmdSandbox,
	"server":           servercmd.NewCmdServer,
	"shell":            command.NewCmdShellAlias,
	"skills":           skills.NewCmdSkills,
	"snapshot":         snapshot.NewCmdSnapshot,
	"template":         template.NewCmdTemplate,
}

// newRunRoot is the tree that args run in. When args name a command group,
// after none or some of the root's own flags, only that group is built
// under the root: building every group's commands and flags is a
// millisecond or so that every command would pay. Anything else (help,
// completion, --version, a word that names no group) gets the whole tree,
// which those need to list, complete or suggest commands.
func newRunRoot(f *cmdutil.Factory, args []string) *cobra.Command {
	root := newBareRoot(f)
	if build := groupIn(root.PersistentFlags(), args); build != nil {
		// osb's own completion command is in the whole tree only.
		root.CompletionOptions.DisableDefaultCmd = true
		root.AddCommand(build(f))
		return root
	}
	addAll(root, f)
	return root
}

// groupIn is the builder of the group args name past the root's flags, or
// nil when the first word names none or a flag before it is not plainly one
// of the root's (combined shorthands, "--" and the like).
func groupIn(flags *pflag.FlagSet, args []string) func(*cmdutil.Factory) *cobra.Command {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") {
			return groups[arg]
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		var flag *pflag.Flag
		switch {
		case strings.HasPrefix(arg, "--"):
			flag = flags.Lookup(name)
		case len(name) == 1:
			flag = flags.ShorthandLookup(name)
		}
		if flag == nil || arg == "--" {
			return nil
		}
		if !hasValue && flag.NoOptDefVal == "" {
			i++ // the flag's value is the next argument
		}
	}
	return nil
}

func versionText() string {
	s := "opensandbox, version " + build.Version
	var extra []string
	if build.Commit != "" {
		extra = append(extra, "commit "+shortCommit(build.Commit))
	}
	if build.Date != "" {
		extra = append(extra, "built "+build.Date)
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s + "\n"
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
