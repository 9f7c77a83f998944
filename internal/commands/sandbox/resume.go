package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type resumeOptions struct {
	f               *cmdutil.Factory
	SandboxID       string
	SkipHealthCheck bool
	ResumeTimeout   cmdutil.DurationValue
	Format          string
}

func newCmdResume(f *cmdutil.Factory, runF func(context.Context, *resumeOptions) error) *cobra.Command {
	opts := &resumeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "resume SANDBOX_ID",
		Short: "Resume a paused sandbox and wait until it is ready.",
		Long: "Resume a paused sandbox, then wait until it is Running and its execd answers\n" +
			"(unless --skip-health-check). Not ready within --resume-timeout is exit 5;\n" +
			"the sandbox is left as it is.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runResume(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.SkipHealthCheck, "skip-health-check", false, "Return as soon as the server accepts the request.")
	cmdutil.DurationFlag(cmd.Flags(), &opts.ResumeTimeout, "resume-timeout", "", "How long to wait for readiness (default 30s).")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runResume(ctx context.Context, opts *resumeOptions) error {
	var resumed string
	err := opts.f.WithSandbox(ctx, opts.SandboxID, func(c *client.Client, id string) error {
		resumed = id
		return c.ResumeSandbox(ctx, id)
	})
	if err != nil {
		return err
	}
	if !opts.SkipHealthCheck {
		if err := waitReady(ctx, opts.f, resumed, readyTimeout(opts.ResumeTimeout)); err != nil {
			return err
		}
	}
	return opts.f.Printer(opts.Format).Success("Sandbox resumed: " + resumed)
}
