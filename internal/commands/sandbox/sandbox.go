// Package sandbox implements the `osb sandbox` commands: create, list, get,
// kill, pause, resume, renew, endpoint, health and metrics.
package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdSandbox returns the `sandbox` group.
func NewCmdSandbox(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("sandbox", "📦 Manage sandbox lifecycle.")
	cmd.AddCommand(
		newCmdCreate(f, nil),
		newCmdList(f, nil),
		newCmdGet(f, nil),
		newCmdKill(f, nil),
		newCmdPause(f, nil),
		newCmdResume(f, nil),
		newCmdRenew(f, nil),
		newCmdEndpoint(f, nil),
		newCmdHealth(f, nil),
		newCmdMetrics(f, nil),
	)
	return cmd
}

// withSandbox runs op against the sandbox named by id or a unique prefix of
// it, handing op the full id.
func withSandbox(ctx context.Context, f *cmdutil.Factory, id string, op func(c *client.Client, id string) error) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	return cmdutil.WithSandboxID(ctx, c, id, func(full string) error { return op(c, full) })
}
