package snapshot

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type deleteOptions struct {
	f          *cmdutil.Factory
	SnapshotID string
	Format     string
}

func newCmdDelete(f *cmdutil.Factory, runF func(context.Context, *deleteOptions) error) *cobra.Command {
	opts := &deleteOptions{f: f}
	cmd := &cobra.Command{
		Use:     "delete SNAPSHOT_ID",
		Aliases: []string{"rm"},
		Short:   "Delete a snapshot (not while it is still being created).",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SnapshotID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDelete(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runDelete(ctx context.Context, opts *deleteOptions) error {
	c, err := opts.f.Client()
	if err != nil {
		return err
	}
	if err := c.DeleteSnapshot(ctx, opts.SnapshotID); err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Success("Snapshot deleted: " + opts.SnapshotID)
}
