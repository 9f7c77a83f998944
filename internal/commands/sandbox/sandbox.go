// Package sandbox implements the `osb sandbox` commands.
package sandbox

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdSandbox returns the `sandbox` group.
func NewCmdSandbox(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("sandbox", "📦 Manage sandbox lifecycle.")
	return cmd
}
