// Package commands assembles the osb command tree and runs it: flags, the
// mapping of errors to exit codes, and how errors are shown.
package commands

import (
	"strings"

	"github.com/spf13/cobra"

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

	root.AddCommand(
		codecmd.NewCmdCode(f),
		command.NewCmdCommand(f),
		configcmd.NewCmdConfig(f),
		cp.NewCmdCp(f),
		credentialvault.NewCmdCredentialVault(f),
		devops.NewCmdDevops(f),
		diagnostics.NewCmdDiagnostics(f),
		egress.NewCmdEgress(f),
		file.NewCmdFile(f),
		mcpcmd.NewCmdMCP(f),
		sandbox.NewCmdSandbox(f),
		servercmd.NewCmdServer(f),
		command.NewCmdShellAlias(f),
		skills.NewCmdSkills(f),
		snapshot.NewCmdSnapshot(f),
		template.NewCmdTemplate(f),
	)
	addHelpTopics(root)
	root.AddCommand(newCmdCompletion(f), newCmdVersion(f))
	strictHelp(root)
	return root
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
