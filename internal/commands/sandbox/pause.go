package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type pauseOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Format    string
}

func newCmdPause(f *cmdutil.Factory, runF func(context.Context, *pauseOptions) error) *cobra.Command {
	opts := &pauseOptions{f: f}
	cmd := &cobra.Command{
		Use:   "pause SANDBOX_ID",
		Short: "Ask the server to pause a sandbox.",
		Long: "Ask the server to pause a sandbox. The pause completes in the background:\n" +
			"'osb sandbox get' shows Pausing, then Paused.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPause(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runPause(ctx context.Context, opts *pauseOptions) error {
	var paused string
	err := opts.f.WithSandbox(ctx, opts.SandboxID, func(c *client.Client, id string) error {
		paused = id
		return c.PauseSandbox(ctx, id)
	})
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Success("Pause request accepted: " + paused)
}
