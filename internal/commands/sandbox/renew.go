package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type renewOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Timeout cmdutil.DurationValue
}

func newCmdRenew(f *cmdutil.Factory) *cobra.Command {
	opts := &renewOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[renewOptions]{
		Name:  "renew",
		Short: "Set a sandbox to expire a given time from now.",
		Long: "Set a sandbox to expire --timeout from now. This is a fresh lifetime, not\n" +
			"added to what was left. expires_at is printed as the server wrote it (RFC\n" +
			"3339); when the server does not say, osb prints the time it asked for, in UTC.",
		Example: "  osb sandbox renew sbx-123 -t 30m",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.Timeout(&opts.Timeout, "timeout", "t", "New lifetime from now, e.g. 30m or 1h30m (required).")
			fs.Required("timeout")
		},
		Run: runRenew,
	})
}

// renewedView is what renew prints.
type renewedView struct {
	SandboxID string      `json:"sandbox_id"`
	ExpiresAt client.Time `json:"expires_at"`
}

func runRenew(ctx context.Context, opts *renewOptions) error {
	var v renewedView
	err := opts.Sandbox.Do(ctx, func(c *client.Client, id string) error {
		at := opts.Now().Add(opts.Timeout.D)
		got, err := c.RenewSandbox(ctx, id, at)
		v = renewedView{SandboxID: id, ExpiresAt: got}
		if got.IsZero() {
			v.ExpiresAt = client.NewTime(at)
		}
		return err
	})
	if err != nil {
		return err
	}
	return opts.Printer().Panel("Sandbox Renewed", v)
}
