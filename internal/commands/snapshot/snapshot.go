// Package snapshot implements the `osb snapshot` commands: create, get,
// list and delete.
package snapshot

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdSnapshot returns the `snapshot` group.
func NewCmdSnapshot(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("snapshot", "📸 Manage sandbox snapshots.")
	cmd.Long = "Manage snapshots: persistent captures of a running sandbox that new sandboxes\n" +
		"are created from with 'osb sandbox create --snapshot-id'. A snapshot starts\n" +
		"Creating and can be restored once it is Ready."
	cmd.AddCommand(
		newCmdCreate(f, nil),
		newCmdGet(f, nil),
		newCmdList(f, nil),
		newCmdDelete(f, nil),
	)
	return cmd
}
