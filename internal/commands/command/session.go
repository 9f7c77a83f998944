package command

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// newCmdSession returns the `command session` group.
func newCmdSession(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("session", "Manage persistent bash sessions.")
	cmd.Long = "A session is one bash shell that stays alive between runs: the working directory,\n" +
		"exported variables and functions of one run are there for the next."
	cmd.AddCommand(
		newCmdSessionCreate(f),
		newCmdSessionRun(f),
		newCmdSessionDelete(f),
	)
	return cmd
}

type sessionCreateOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Workdir string
}

func newCmdSessionCreate(f *cmdutil.Factory) *cobra.Command {
	opts := &sessionCreateOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[sessionCreateOptions]{
		Name:    "create",
		Short:   "Create a persistent bash session.",
		Long:    "Start a bash session and print its id, for 'osb command session run'.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Workdir, "workdir", "w", "", "Working directory of the session (created if missing).")
		},
		Run: runSessionCreate,
	})
}

// sessionView is what session create prints; working_directory is null
// when none was given.
type sessionView struct {
	SandboxID        string  `json:"sandbox_id"`
	SessionID        string  `json:"session_id"`
	WorkingDirectory *string `json:"working_directory"`
}

func runSessionCreate(ctx context.Context, opts *sessionCreateOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	sid, err := dp.CreateSession(ctx, opts.Workdir)
	if err != nil {
		return err
	}
	v := sessionView{SandboxID: dp.SandboxID, SessionID: sid}
	if opts.Workdir != "" {
		v.WorkingDirectory = &opts.Workdir
	}
	return opts.Printer().Panel("Session Created", v)
}

type sessionRunOptions struct {
	cmdutil.Base
	Sandbox    cmdutil.Sandbox
	SessionID  string
	Command    []string
	Workdir    string
	Timeout    cmdutil.DurationValue
	interrupts interruptsFunc
}

func newCmdSessionRun(f *cmdutil.Factory) *cobra.Command {
	opts := &sessionRunOptions{interrupts: notifyInterrupts}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[sessionRunOptions]{
		Name:  "run",
		Short: "Run a command in an existing bash session.",
		Long: "Run a command in a bash session. Output is streamed as it is written (stderr\n" +
			"arrives merged into stdout), and osb exits with the command's exit code, as\n" +
			"'osb command run' does. Ctrl-C stops the command by closing the session.\n\n" +
			"Put -- before the command. Its arguments are joined into one line of shell\n" +
			"text, each quoted for the shell.",
		Example: "  osb command session run abc123 $SID -- cd /workspace/app\n" +
			"  osb command session run abc123 $SID -- make test",
		Args: []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("SESSION_ID", &opts.SessionID),
			cmdutil.CommandArg(&opts.Command)},
		Formats: &cmdutil.Formats{Allowed: runFormats.Allowed, Usage: "Output format: raw (default) or json."},
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Workdir, "workdir", "w", "", "Working directory for this run (the session stays there).")
			fs.Timeout(&opts.Timeout, "timeout", "t", "Stop the command after this long (e.g. 30s, 5m).")
		},
		Run: runSessionRun,
	})
}

func runSessionRun(ctx context.Context, opts *sessionRunOptions) error {
	if err := checkFormat(&opts.Format, false); err != nil {
		return err
	}
	req := &client.SessionRunRequest{Command: shellJoin(opts.Command), Cwd: opts.Workdir, Timeout: opts.Timeout.D.Milliseconds()}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return osbFailed(err)
	}
	fg := &foreground{
		ios: opts.IOStreams, format: opts.Format, filter: opts.Printer().Filter, timeout: opts.Timeout.D, session: true,
		interrupts: opts.interrupts,
		open: func(ctx context.Context) (*client.EventStream, error) {
			return dp.RunInSession(ctx, opts.SessionID, req)
		},
		stop: dp.InterruptCommand,
	}
	return fg.run(ctx)
}

func newCmdSessionDelete(f *cmdutil.Factory) *cobra.Command {
	opts := &endOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[endOptions]{
		Name:    "delete",
		Short:   "Delete a bash session.",
		Long:    "End a bash session: its shell and whatever it still runs are killed.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("SESSION_ID", &opts.SessionID)},
		Formats: cmdutil.TableFormats,
		Run:     runSessionDelete,
	})
}

func runSessionDelete(ctx context.Context, opts *endOptions) error {
	return endSessions(ctx, opts, "Deleted session: ", []string{opts.SessionID}, (*client.DataPlane).DeleteSession)
}

// endOptions is what session delete and shell kill take: the sandbox and
// the session (delete) or sessions (kill).
type endOptions struct {
	cmdutil.Base
	Sandbox    cmdutil.Sandbox
	SessionID  string
	SessionIDs []string
}

// endSessions ends each session in turn with end, saying so for each.
func endSessions(ctx context.Context, opts *endOptions, done string, ids []string, end func(*client.DataPlane, context.Context, string) error) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	p := opts.Printer()
	for _, id := range ids {
		if err := end(dp, ctx, id); err != nil {
			return err
		}
		if err := p.Success(done + id); err != nil {
			return err
		}
	}
	return nil
}
