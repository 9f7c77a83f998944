package sandbox

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type renewOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Timeout   cmdutil.DurationValue
	Format    string
}

func newCmdRenew(f *cmdutil.Factory, runF func(context.Context, *renewOptions) error) *cobra.Command {
	opts := &renewOptions{f: f}
	cmd := &cobra.Command{
		Use:   "renew SANDBOX_ID",
		Short: "Set a sandbox to expire a given time from now.",
		Long: "Set a sandbox to expire --timeout from now. This is a fresh lifetime, not\n" +
			"added to what was left. expires_at is printed in RFC 3339, UTC.",
		Example:           "  osb sandbox renew sbx-123 -t 30m",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRenew(cmd.Context(), opts)
		},
	}
	cmdutil.DurationFlag(cmd.Flags(), &opts.Timeout, "timeout", "t", "New lifetime from now, e.g. 30m or 1h30m (required).")
	_ = cmd.MarkFlagRequired("timeout")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runRenew(ctx context.Context, opts *renewOptions) error {
	var renewed string
	var expires time.Time
	err := opts.f.WithSandbox(ctx, opts.SandboxID, func(c *client.Client, id string) error {
		renewed = id
		at := opts.f.Now().Add(opts.Timeout.D)
		got, err := c.RenewSandbox(ctx, id, at)
		expires = got
		if got.IsZero() {
			expires = at
		}
		return err
	})
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Panel("Sandbox Renewed", output.Obj{
		{Key: "sandbox_id", Value: renewed},
		{Key: "expires_at", Value: cmdutil.FormatTime(expires)},
	})
}
