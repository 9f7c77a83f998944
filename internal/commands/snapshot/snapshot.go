// Package snapshot implements the `osb snapshot` commands.
package snapshot

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdSnapshot returns the `snapshot` group.
func NewCmdSnapshot(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("snapshot", "📸 Manage sandbox snapshots.")
	return cmd
}
