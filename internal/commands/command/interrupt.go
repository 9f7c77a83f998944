package command

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type interruptOptions struct {
	cmdutil.Base
	Sandbox     cmdutil.Sandbox
	ExecutionID string
}

func newCmdInterrupt(f *cmdutil.Factory) *cobra.Command {
	opts := &interruptOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[interruptOptions]{
		Name:  "interrupt",
		Short: "Interrupt a running command.",
		Long: "Stop a running command: its process group gets SIGTERM, then SIGKILL if it is\n" +
			"still there a few seconds later. osb returns once it is gone.\n" +
			"Given a session id, this closes the whole session.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("EXECUTION_ID", &opts.ExecutionID)},
		Formats: cmdutil.TableFormats,
		Run:     runInterrupt,
	})
}

func runInterrupt(ctx context.Context, opts *interruptOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	if err := dp.InterruptCommand(ctx, opts.ExecutionID); err != nil {
		return err
	}
	return opts.Printer().Success("Interrupted: " + opts.ExecutionID)
}
