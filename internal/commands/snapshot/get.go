package snapshot

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type getOptions struct {
	f          *cmdutil.Factory
	SnapshotID string
	Format     string
}

func newCmdGet(f *cmdutil.Factory, runF func(context.Context, *getOptions) error) *cobra.Command {
	opts := &getOptions{f: f}
	cmd := &cobra.Command{
		Use:   "get SNAPSHOT_ID",
		Short: "Show one snapshot and its state.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SnapshotID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runGet(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runGet(ctx context.Context, opts *getOptions) error {
	c, err := opts.f.Client()
	if err != nil {
		return err
	}
	s, err := c.GetSnapshot(ctx, opts.SnapshotID)
	if err != nil {
		return err
	}
	view := newSnapshotView(s)
	return cmdutil.PrintRecord(opts.f.Printer(opts.Format), "Snapshot Info", view, view.record())
}
