package command

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type sessionDeleteOptions struct {
	cmdutil.Base
	Sandbox   cmdutil.Sandbox
	SessionID string
}

func newCmdSessionDelete(f *cmdutil.Factory) *cobra.Command {
	opts := &sessionDeleteOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[sessionDeleteOptions]{
		Name:    "delete",
		Short:   "Delete a bash session.",
		Long:    "End a bash session: its shell and whatever it still runs are killed.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("SESSION_ID", &opts.SessionID)},
		Formats: cmdutil.TableFormats,
		Run:     runSessionDelete,
	})
}

func runSessionDelete(ctx context.Context, opts *sessionDeleteOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	if err := dp.DeleteSession(ctx, opts.SessionID); err != nil {
		return err
	}
	return opts.Printer().Success("Deleted session: " + opts.SessionID)
}
