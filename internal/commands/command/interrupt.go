package command

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type interruptOptions struct {
	f           *cmdutil.Factory
	SandboxID   string
	ExecutionID string
	Format      string
}

func newCmdInterrupt(f *cmdutil.Factory, runF func(*interruptOptions) error) *cobra.Command {
	opts := &interruptOptions{f: f}
	cmd := &cobra.Command{
		Use:   "interrupt SANDBOX_ID EXECUTION_ID",
		Short: "Interrupt a running command.",
		Long: "Stop a running command: its process group gets SIGTERM, then SIGKILL if it is\n" +
			"still there a few seconds later. osb returns once it is gone.\n" +
			"Given a session id, this closes the whole session.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.ExecutionID = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return runInterrupt(cmd, opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, output.Table, output.Table, output.JSONF, output.YAMLF)
	return cmd
}

func runInterrupt(cmd *cobra.Command, opts *interruptOptions) error {
	ctx := cmd.Context()
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	if err := dp.InterruptCommand(ctx, opts.ExecutionID); err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Success("Interrupted: " + opts.ExecutionID)
}
