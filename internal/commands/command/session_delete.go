package command

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type sessionDeleteOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	SessionID string
	Format    string
}

func newCmdSessionDelete(f *cmdutil.Factory, runF func(*sessionDeleteOptions) error) *cobra.Command {
	opts := &sessionDeleteOptions{f: f}
	cmd := &cobra.Command{
		Use:   "delete SANDBOX_ID SESSION_ID",
		Short: "Delete a bash session.",
		Long:  "End a bash session: its shell and whatever it still runs are killed.",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.SessionID = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return runSessionDelete(cmd, opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, output.Table, output.Table, output.JSONF, output.YAMLF)
	return cmd
}

func runSessionDelete(cmd *cobra.Command, opts *sessionDeleteOptions) error {
	ctx := cmd.Context()
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	if err := dp.DeleteSession(ctx, opts.SessionID); err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Success("Deleted session: " + opts.SessionID)
}
