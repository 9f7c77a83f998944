// Package egress implements the `osb egress` commands.
package egress

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdEgress returns the `egress` group.
func NewCmdEgress(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("egress", "Manage runtime egress policy for a sandbox.")
	return cmd
}
