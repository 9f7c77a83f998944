package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type resumeOptions struct {
	cmdutil.Base
	Sandbox         cmdutil.Sandbox
	SkipHealthCheck bool
	ResumeTimeout   cmdutil.DurationValue
}

func newCmdResume(f *cmdutil.Factory) *cobra.Command {
	opts := &resumeOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[resumeOptions]{
		Name:  "resume",
		Short: "Resume a paused sandbox and wait until it is ready.",
		Long: "Resume a paused sandbox, then wait until it is Running and its execd answers\n" +
			"(unless --skip-health-check). Not ready within --resume-timeout is exit 5;\n" +
			"the sandbox is left as it is.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.BoolVar(&opts.SkipHealthCheck, "skip-health-check", false, "Return as soon as the server accepts the request.")
			fs.Timeout(&opts.ResumeTimeout, "resume-timeout", "", "How long to wait for readiness (default 30s; not 0: --skip-health-check does not wait).")
		},
		Run: runResume,
	})
}

func runResume(ctx context.Context, opts *resumeOptions) error {
	var resumed string
	err := opts.Sandbox.Do(ctx, func(c *client.Client, id string) error {
		resumed = id
		return c.ResumeSandbox(ctx, id)
	})
	if err != nil {
		return err
	}
	if !opts.SkipHealthCheck {
		if err := waitReady(ctx, opts.Factory, resumed, readyTimeout(opts.ResumeTimeout)); err != nil {
			return err
		}
	}
	return opts.Printer().Success("Sandbox resumed: " + resumed)
}
