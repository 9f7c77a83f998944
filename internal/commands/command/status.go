package command

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type statusOptions struct {
	f           *cmdutil.Factory
	SandboxID   string
	ExecutionID string
	Format      string
}

func newCmdStatus(f *cmdutil.Factory, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{f: f}
	cmd := &cobra.Command{
		Use:   "status SANDBOX_ID EXECUTION_ID",
		Short: "Get command execution status.",
		Long: "Show whether a command (background or foreground) is still running, and once it\n" +
			"has finished, its exit code and finish time.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.ExecutionID = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return runStatus(cmd, opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, output.Table, output.Table, output.JSONF, output.YAMLF)
	return cmd
}

func runStatus(cmd *cobra.Command, opts *statusOptions) error {
	ctx := cmd.Context()
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	st, err := dp.CommandStatus(ctx, opts.ExecutionID)
	if err != nil {
		return err
	}
	st.StartedAt, st.FinishedAt = microseconds(st.StartedAt), microseconds(st.FinishedAt)
	return opts.f.Printer(opts.Format).Object("Command Status", st)
}

// microseconds is a time as the official client prints it: UTC, to the
// microsecond (execd sends nanoseconds).
func microseconds(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	m := t.UTC().Truncate(time.Microsecond)
	return &m
}
