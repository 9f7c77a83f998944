package mcp

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	osbmcp "github.com/osb-dev/osb/internal/mcp"
	"github.com/osb-dev/osb/internal/mcp/agentconfig"
)

type installOptions struct {
	cmdutil.Base
	// Getwd finds the project scope's directory and GOOS the global one's;
	// tests set them.
	Getwd           func() (string, error)
	GOOS            string
	Target          string
	Scope           string
	Name            string
	Command         string
	Tools           []string
	AllowAnySandbox bool
}

const (
	scopeProject = "project"
	scopeGlobal  = "global"
	allTargets   = "all"
)

// result is what install did for one agent.
type result struct {
	Target string `json:"target"`
	Label  string `json:"label"`
	Scope  string `json:"scope"`
	Path   string `json:"path"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// statusSkipped is an agent that reads MCP servers from no file of that scope.
const statusSkipped = "skipped"

// newCmdInstall builds install; runF, when not nil, replaces runInstall.
func newCmdInstall(f *cmdutil.Factory, runF func(context.Context, *installOptions) error) *cobra.Command {
	opts := &installOptions{Getwd: os.Getwd, GOOS: runtime.GOOS}
	v := cmdutil.Verb[installOptions]{
		Name:  "install",
		Short: "Point a coding agent at `osb mcp` (writes its MCP client configuration).",
		Long: "Add `osb mcp` as a stdio MCP server to a coding agent's configuration, for the\n" +
			"same agents as `osb skills install`. --scope project writes the agent's file in\n" +
			"the current directory, --scope global the one in your home directory. Every\n" +
			"other entry and setting of the file is kept; running it again changes nothing\n" +
			"(already_present) unless the entry differs (updated). A file osb cannot read as\n" +
			"plain JSON or TOML is left alone and the error says so.\n\n" +
			"No secret is written: the server reads its connection settings from the osb\n" +
			"config file and environment when the agent starts it. Use --command with the\n" +
			"full path of osb when the agent does not see your PATH.\n\n" +
			"Files: claude .mcp.json, ~/.claude.json; cursor .cursor/mcp.json, ~/.cursor/mcp.json;\n" +
			"codex .codex/config.toml, ~/.codex/config.toml; copilot .vscode/mcp.json, VS Code's\n" +
			"user mcp.json; windsurf ~/.codeium/windsurf/mcp_config.json (global only); cline\n" +
			"its cline_mcp_settings.json in VS Code's storage (global only); opencode\n" +
			"opencode.json, ~/.config/opencode/opencode.json.",
		Example: "  osb mcp install --target claude --scope project\n" +
			"  osb mcp install --target all --scope global --command \"$(command -v osb)\"\n" +
			"  osb mcp install --target codex --scope global --tools default,command_logs -o json",
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			// --target and --scope have no default: install explains them
			// when they are missing.
			fs.Enum(&opts.Target, "target", "t", "", append(agentconfig.AgentNames(), allTargets),
				"Coding tool: "+strings.Join(agentconfig.AgentNames(), ", ")+", or all.")
			fs.Enum(&opts.Scope, "scope", "", "", []string{scopeProject, scopeGlobal},
				"Where: project (the current directory) or global (your home directory).")
			fs.StringVar(&opts.Name, "name", "osb", "Name of the server entry.")
			fs.StringVar(&opts.Command, "command", "osb", "Command the agent runs to start the server.")
			fs.StringSliceVar(&opts.Tools, "tools", nil, "Comma-separated `LIST` of tools for the server, as osb mcp --tools takes it.")
			fs.BoolVar(&opts.AllowAnySandbox, "allow-any-sandbox", false, "Let the server act on any sandbox (osb mcp --allow-any-sandbox).")
		},
		Run: runInstall,
	}
	if runF != nil {
		v.Run = runF
	}
	cmd := cmdutil.NewVerb(f, opts, v)
	cmd.Annotations = map[string]string{cmdutil.NoConfig: ""}
	return cmd
}

// entry is the server entry the options describe, checked.
func (o *installOptions) entry() (agentconfig.Entry, error) {
	switch {
	case o.Target == "":
		return agentconfig.Entry{}, cmdutil.UsageErrorf("--target is required: one of %s, or all", strings.Join(agentconfig.AgentNames(), ", "))
	case o.Scope == "":
		return agentconfig.Entry{}, cmdutil.UsageErrorf("--scope is required: project (the current directory) or global (your home directory)")
	case strings.TrimSpace(o.Name) == "" || strings.TrimSpace(o.Command) == "":
		return agentconfig.Entry{}, cmdutil.UsageErrorf("--name and --command must not be empty")
	}
	args := []string{"mcp"}
	if len(o.Tools) > 0 {
		if _, err := osbmcp.SelectTools(o.Tools); err != nil {
			return agentconfig.Entry{}, err
		}
		args = append(args, "--tools", strings.Join(o.Tools, ","))
	}
	if o.AllowAnySandbox {
		args = append(args, "--allow-any-sandbox")
	}
	return agentconfig.Entry{Name: o.Name, Command: o.Command, Args: args}, nil
}

// root is the directory the scope's paths start from.
func (o *installOptions) root() (string, error) {
	if o.Scope == scopeProject {
		dir, err := o.Getwd()
		if err != nil {
			return "", fmt.Errorf("cannot find the working directory: %w", err)
		}
		return dir, nil
	}
	if home := o.Getenv("HOME"); home != "" {
		return home, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the home directory for --scope global: %w", err)
	}
	return home, nil
}

func runInstall(_ context.Context, opts *installOptions) error {
	e, err := opts.entry()
	if err != nil {
		return err
	}
	root, err := opts.root()
	if err != nil {
		return err
	}
	agents := agentconfig.Agents
	if opts.Target != allTargets {
		a, _ := agentconfig.LookupAgent(opts.Target)
		agents = []agentconfig.Agent{a}
	}
	var results []result
	var failed error
	for _, a := range agents {
		r := result{Target: a.Name, Label: a.Label, Scope: opts.Scope}
		r.Path, r.Status = opts.path(a, root)
		if r.Status == "" {
			r.Status, err = a.Install(r.Path, e)
			if err != nil {
				r.Status, r.Reason = "failed", err.Error()
				failed = err
			}
		} else {
			r.Reason = a.Label + " reads MCP servers from a user-level file only: use --scope global"
		}
		results = append(results, r)
	}
	if err := opts.print(results); err != nil {
		return err
	}
	if failed != nil && len(agents) == 1 {
		return cmdutil.Silent(cmdutil.ExitFailure)
	}
	if failed != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("some configurations were not written")}
	}
	if len(agents) == 1 && results[0].Status == statusSkipped {
		return cmdutil.UsageErrorf("%s", results[0].Reason)
	}
	return nil
}

// path is the agent's file in this scope, or statusSkipped.
func (o *installOptions) path(a agentconfig.Agent, root string) (string, string) {
	if o.Scope == scopeGlobal {
		return a.Global(root, o.Getenv, o.GOOS), ""
	}
	if a.Project == "" {
		return "", statusSkipped
	}
	return a.Project, ""
}

func (o *installOptions) print(results []result) error {
	p := o.Printer()
	if p.Structured() {
		return p.Data(struct {
			Operations      []result `json:"operations"`
			RequiresRestart bool     `json:"requires_restart"`
		}{results, true})
	}
	w := o.IOStreams.Out
	changed := false
	for _, r := range results {
		where := r.Path
		if r.Reason != "" {
			where = r.Reason
		}
		fmt.Fprintf(w, "  %-15s %s [%s]: %s\n", r.Status, r.Label, r.Scope, where)
		changed = changed || r.Status == agentconfig.StatusInstalled || r.Status == agentconfig.StatusUpdated
	}
	msg := "Done. Everything was already in place."
	if changed {
		msg = "Done. Restart your coding tool so that it starts the MCP server."
	}
	_, err := fmt.Fprintln(w, "\n"+msg)
	return err
}
