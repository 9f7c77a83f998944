package command

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type statusOptions struct {
	cmdutil.Base
	Sandbox     cmdutil.Sandbox
	ExecutionID string
}

func newCmdStatus(f *cmdutil.Factory) *cobra.Command {
	opts := &statusOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[statusOptions]{
		Name:  "status",
		Short: "Get command execution status.",
		Long: "Show whether a command (background or foreground) is still running, and once it\n" +
			"has finished, its exit code and finish time. Times are printed as execd wrote them.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("EXECUTION_ID", &opts.ExecutionID)},
		Formats: cmdutil.TableFormats,
		Run:     runStatus,
	})
}

// statusView is a command's status as the official client prints it.
type statusView struct {
	ID         string       `json:"id"`
	Content    string       `json:"content"`
	Running    bool         `json:"running"`
	ExitCode   *int         `json:"exit_code"`
	Error      *string      `json:"error"`
	StartedAt  *client.Time `json:"started_at"`
	FinishedAt *client.Time `json:"finished_at"`
}

func runStatus(ctx context.Context, opts *statusOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	st, err := dp.CommandStatus(ctx, opts.ExecutionID)
	if err != nil {
		return err
	}
	return opts.Printer().Object("Command Status", statusView{ID: st.ID, Content: st.Content, Running: st.Running,
		ExitCode: st.ExitCode, Error: st.Error, StartedAt: st.StartedAt, FinishedAt: st.FinishedAt})
}
