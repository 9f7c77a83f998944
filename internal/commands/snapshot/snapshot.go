// Package snapshot implements the `osb snapshot` commands: create, get,
// list and delete.
package snapshot

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// snapshots is what get and delete need to know about snapshots.
var snapshots = cmdutil.Resource[client.Snapshot, snapshotView]{
	Noun: "snapshot", Title: "Snapshot", Arg: cmdutil.SnapshotArg,
	Get: func(ctx context.Context, c *client.Client, id string) (*client.Snapshot, error) {
		return c.GetSnapshot(ctx, id)
	},
	Delete: func(ctx context.Context, c *client.Client, id string) error { return c.DeleteSnapshot(ctx, id) },
	View:   newSnapshotView,
}

// NewCmdSnapshot returns the `snapshot` group.
func NewCmdSnapshot(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("snapshot", "📸 Manage sandbox snapshots.")
	cmd.Long = "Manage snapshots: persistent captures of a running sandbox that new sandboxes\n" +
		"are created from with 'osb sandbox create --snapshot-id'. A snapshot starts\n" +
		"Creating and can be restored once it is Ready."
	cmd.AddCommand(
		newCmdCreate(f),
		snapshots.GetVerb(f, "Show one snapshot and its state."),
		newCmdList(f),
		snapshots.DeleteVerb(f, "Delete a snapshot (not while it is still being created)."),
	)
	return cmd
}
