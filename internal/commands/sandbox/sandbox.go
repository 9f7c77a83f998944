// Package sandbox implements the `osb sandbox` commands: create, list, get,
// kill, pause, resume, renew, endpoint, health and metrics.
package sandbox

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdSandbox returns the `sandbox` group.
func NewCmdSandbox(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("sandbox", "📦 Manage sandbox lifecycle.")
	cmd.AddCommand(
		newCmdCreate(f),
		newCmdList(f),
		newCmdGet(f),
		newCmdKill(f),
		newCmdPause(f),
		newCmdResume(f),
		newCmdRenew(f),
		newCmdEndpoint(f),
		newCmdPortForward(f),
		newCmdHealth(f),
		newCmdMetrics(f),
	)
	return cmd
}
