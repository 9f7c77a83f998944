package command

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

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
