package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	osbmcp "github.com/osb-dev/osb/internal/mcp"
	"github.com/osb-dev/osb/internal/mcp/agentconfig"
	"github.com/osb-dev/osb/internal/ops"
)

type installOptions struct {
	cmdutil.Base
	// Getwd finds the project scope's directory, GOOS the global one's and
	// Executable the running osb; tests set them.
	Getwd           func() (string, error)
	GOOS            string
	Executable      func() (string, error)
	Target          string
	Scope           string
	Name            string
	Command         string
	CommandGiven    bool
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
	// Note is what the agent still needs for the entry to work.
	Note string `json:"note,omitempty"`
}

// statusFailed is a file osb refused to change, or could not write.
const statusFailed = "failed"

// statusSkipped is an agent that reads MCP servers from no file of that scope.
const statusSkipped = "skipped"

// newCmdInstall builds install; runF, when not nil, replaces runInstall.
func newCmdInstall(f *cmdutil.Factory, runF func(context.Context, *installOptions) error) *cobra.Command {
	opts := &installOptions{Getwd: os.Getwd, GOOS: runtime.GOOS, Executable: os.Executable}
	v := cmdutil.Verb[installOptions]{
		Name:  "install",
		Short: "Point a coding agent at `osb mcp` (writes its MCP client configuration).",
		Long: "Add `osb mcp` as a stdio MCP server to a coding agent's configuration, for the\n" +
			"same agents as `osb skills install`. --scope project writes the agent's file in\n" +
			"the current directory, --scope global the one in your home directory. Every\n" +
			"other entry and setting of the file is kept; running it again changes nothing\n" +
			"(already_present) unless the entry differs (updated). A file osb cannot read as\n" +
			"plain JSON or TOML (comments, trailing commas) is refused: it is left as it is,\n" +
			"the reason is shown, and the exit code is 1.\n\n" +
			"No secret is written: the server reads its connection settings from the osb\n" +
			"config file and environment when the agent starts it. The entry runs \"osb\" when\n" +
			"the osb on your PATH is this one, else the full path of this osb (it says so);\n" +
			"--command sets another.\n\n" +
			"Files: claude .mcp.json, ~/.claude.json; cursor .cursor/mcp.json, ~/.cursor/mcp.json;\n" +
			"codex .codex/config.toml, ~/.codex/config.toml; copilot .vscode/mcp.json, VS Code's\n" +
			"user mcp.json; windsurf ~/.codeium/windsurf/mcp_config.json (global only); cline\n" +
			"~/.cline/data/settings/cline_mcp_settings.json ($CLINE_MCP_SETTINGS_PATH), and\n" +
			"the one in VS Code's storage where it exists (global only); opencode opencode.json,\n" +
			"~/.config/opencode/opencode.json. Codex reads a project's .codex/config.toml only\n" +
			"once you trust the project in Codex; install says when it is not trusted yet.",
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
			fs.StringVar(&opts.Command, "command", "", "Command the agent runs to start the server (default: osb when that is this osb on PATH, else this osb's full path).")
			fs.Given("command", &opts.CommandGiven)
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
		return agentconfig.Entry{}, ops.UsageErrorf("--target is required: one of %s, or all", strings.Join(agentconfig.AgentNames(), ", "))
	case o.Scope == "":
		return agentconfig.Entry{}, ops.UsageErrorf("--scope is required: project (the current directory) or global (your home directory)")
	case strings.TrimSpace(o.Name) == "" || o.CommandGiven && strings.TrimSpace(o.Command) == "":
		return agentconfig.Entry{}, ops.UsageErrorf("--name and --command must not be empty")
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

// command is what the agent runs: --command as given; else "osb" when the
// osb found on PATH is this one, or else this osb's full path, with a note
// that says why.
func (o *installOptions) command() (command, note string) {
	if o.CommandGiven {
		return o.Command, ""
	}
	self, err := o.Executable()
	if err != nil {
		return "osb", fmt.Sprintf("cannot tell where this osb is (%v): the entries run osb from the agent's PATH", err)
	}
	self = resolved(self)
	found := lookPath("osb", o.Getenv("PATH"), o.GOOS)
	switch {
	case found == "":
		note = "osb is not on your PATH, so the entries run this osb by its full path, " + self
	case resolved(found) != self:
		note = fmt.Sprintf("the osb on your PATH (%s) is another program, so the entries run this osb by its full path, %s", found, self)
	default:
		return "osb", ""
	}
	return self, note + " (--command sets another)"
}

// lookPath finds an executable file in a PATH list, or returns "". On
// Windows the file is NAME.exe, and any file will do.
func lookPath(name, pathList, goos string) string {
	if goos == "windows" {
		name += ".exe"
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		info, err := os.Stat(p)
		if err == nil && info.Mode().IsRegular() && (goos == "windows" || info.Mode().Perm()&0o111 != 0) {
			return p
		}
	}
	return ""
}

// resolved is path with its symbolic links followed, when they can be.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
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
	return o.home()
}

func (o *installOptions) home() (string, error) {
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
	var commandNote string
	if e.Command, commandNote = opts.command(); commandNote != "" {
		fmt.Fprintln(opts.IOStreams.ErrOut, "Note: "+commandNote+".")
	}
	agents := agentconfig.Agents
	if opts.Target != allTargets {
		a, _ := agentconfig.LookupAgent(opts.Target)
		agents = []agentconfig.Agent{a}
	}
	var results []result
	failed := 0
	for _, a := range agents {
		r := result{Target: a.Name, Label: a.Label, Scope: opts.Scope}
		r.Path, r.Status = opts.path(a, root)
		if r.Status == statusSkipped {
			r.Reason = a.Label + " reads MCP servers from a user-level file only: use --scope global"
			results = append(results, r)
			continue
		}
		if r.Status, err = a.Install(r.Path, e); err != nil {
			r.Status, r.Reason = statusFailed, err.Error()
			failed++
		}
		if a.Name == "codex" && opts.Scope == scopeProject && r.Status != statusFailed {
			r.Note = opts.codexTrustNote(root)
		}
		results = append(results, r)
		if former := opts.former(a, root); former != "" {
			f := result{Target: a.Name, Label: a.Label + " (older versions)", Scope: opts.Scope, Path: former}
			if f.Status, err = a.Install(former, e); err != nil {
				f.Status, f.Reason = statusFailed, err.Error()
				failed++
			}
			results = append(results, f)
		}
	}
	if err := opts.print(results, e.Command); err != nil {
		return err
	}
	switch {
	case failed > 0 && len(results) == 1:
		return ops.Silent(ops.ExitFailure)
	case failed > 0:
		return &ops.ExitError{Code: ops.ExitFailure, Err: fmt.Errorf("%d of %d configurations were not written", failed, len(results))}
	case len(agents) == 1 && results[0].Status == statusSkipped:
		return ops.UsageErrorf("%s", results[0].Reason)
	}
	return nil
}

// codexTrustNote says, when Codex does not trust the project yet, that it
// will not read the project's file until it does. Trusting is the user's
// decision: osb never writes it.
func (o *installOptions) codexTrustNote(dir string) string {
	home, err := o.home()
	if err != nil {
		return ""
	}
	project, trusted := agentconfig.CodexTrust(home, o.Getenv, dir)
	if trusted {
		return ""
	}
	return fmt.Sprintf("Codex reads .codex/config.toml only in a project you trust, and %s is not trusted yet: "+
		"answer yes when Codex asks whether to trust it, or add [projects.%q] trust_level = \"trusted\" to %s",
		project, project, agentconfig.CodexConfig(home, o.Getenv))
}

// former is the agent's former user-level file, when the scope is global
// and it exists; "" otherwise.
func (o *installOptions) former(a agentconfig.Agent, root string) string {
	if o.Scope != scopeGlobal || a.Former == nil {
		return ""
	}
	path := a.Former(root, o.Getenv, o.GOOS)
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
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

func (o *installOptions) print(results []result, command string) error {
	p := o.Printer()
	if p.Structured() {
		return p.Data(struct {
			Operations      []result `json:"operations"`
			Command         string   `json:"command"`
			RequiresRestart bool     `json:"requires_restart"`
		}{results, command, true})
	}
	w := o.IOStreams.Out
	changed, failed := false, false
	for _, r := range results {
		where := r.Path
		if r.Reason != "" {
			where = r.Reason
		}
		fmt.Fprintf(w, "  %-15s %s [%s]: %s\n", r.Status, r.Label, r.Scope, where)
		if r.Note != "" {
			fmt.Fprintf(w, "  %-15s %s\n", "", "Note: "+r.Note+".")
		}
		changed = changed || r.Status == agentconfig.StatusInstalled || r.Status == agentconfig.StatusUpdated
		failed = failed || r.Status == statusFailed
	}
	var msg string
	switch {
	case failed && changed:
		msg = "Not all done: the files marked failed were left as they were (see why above); add the entry to them by hand.\n" +
			"Restart the coding tools whose files were written so that they start the MCP server."
	case failed:
		msg = "Nothing was written: the files marked failed were left as they were (see why above); add the entry to them by hand."
	case changed:
		msg = "Done. Restart your coding tool so that it starts the MCP server."
	default:
		msg = "Done. Everything was already in place."
	}
	_, err := fmt.Fprintln(w, "\n"+msg)
	return err
}
