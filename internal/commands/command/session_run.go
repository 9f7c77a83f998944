package command

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type sessionRunOptions struct {
	f          *cmdutil.Factory
	SandboxID  string
	SessionID  string
	Command    []string
	Workdir    string
	Timeout    cmdutil.DurationValue
	Format     string
	interrupts interruptsFunc
}

func newCmdSessionRun(f *cmdutil.Factory, runF func(*sessionRunOptions) error) *cobra.Command {
	opts := &sessionRunOptions{f: f, interrupts: notifyInterrupts}
	cmd := &cobra.Command{
		Use:   "run SANDBOX_ID SESSION_ID [flags] -- COMMAND...",
		Short: "Run a command in an existing bash session.",
		Long: "Run a command in a bash session. Output is streamed as it is written (stderr\n" +
			"arrives merged into stdout), and osb exits with the command's exit code, as\n" +
			"'osb command run' does. Ctrl-C stops the command by closing the session.\n\n" +
			"Put -- before the command. Its arguments are joined into one line of shell\n" +
			"text, each quoted for the shell.",
		Example: "  osb command session run abc123 $SID -- cd /workspace/app\n" +
			"  osb command session run abc123 $SID -- make test",
		Args: commandArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.SessionID, opts.Command = args[0], args[1], args[2:]
			if runF != nil {
				return runF(opts)
			}
			return runSessionRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Workdir, "workdir", "w", "", "Working directory for this run (the session stays there).")
	cmdutil.DurationFlag(cmd.Flags(), &opts.Timeout, "timeout", "t", "Stop the command after this long (e.g. 30s, 5m).")
	cmdutil.OutputFlag(cmd, &opts.Format, "", output.Table, output.JSONF, output.YAMLF, output.Raw)
	cmd.Flag("output").Usage = "Output format: raw (default) or json."
	cmd.SetFlagErrorFunc(separatorHint)
	return cmd
}

func runSessionRun(ctx context.Context, opts *sessionRunOptions) error {
	if err := checkFormat(&opts.Format, false); err != nil {
		return err
	}
	req := &client.SessionRunRequest{Command: shellJoin(opts.Command), Cwd: opts.Workdir, Timeout: opts.Timeout.D.Milliseconds()}
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return osbFailed(err)
	}
	fg := &foreground{
		ios: opts.f.IOStreams, format: opts.Format, timeout: opts.Timeout.D, session: true, interrupts: opts.interrupts,
		open: func(ctx context.Context) (*client.EventStream, error) {
			return dp.RunInSession(ctx, opts.SessionID, req)
		},
		stop: dp.InterruptCommand,
	}
	return fg.run(ctx)
}
