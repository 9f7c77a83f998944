// Package sandbox implements the `osb sandbox` commands: create, list, get,
// kill, pause, resume, renew, endpoint, health and metrics.
package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

// NewCmdSandbox returns the `sandbox` group.
func NewCmdSandbox(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("sandbox", "📦 Manage sandbox lifecycle.")
	cmd.AddCommand(
		newCmdCreate(f),
		newCmdList(f),
		sandboxVerb(f, cmdutil.Verb[sandboxOptions]{
			Name:  "get",
			Short: "Show one sandbox.",
			Long:  "Show one sandbox. SANDBOX_ID may be any unique prefix of the id.",
			Run:   runGet,
		}),
		newCmdKill(f),
		sandboxVerb(f, cmdutil.Verb[sandboxOptions]{
			Name:  "pause",
			Short: "Ask the server to pause a sandbox.",
			Long: "Ask the server to pause a sandbox. The pause completes in the background:\n" +
				"'osb sandbox get' shows Pausing, then Paused.",
			Run: runPause,
		}),
		newCmdResume(f),
		newCmdRenew(f),
		newCmdEndpoint(f),
		newCmdPortForward(f),
		sandboxVerb(f, cmdutil.Verb[sandboxOptions]{
			Name:  "health",
			Short: "Check whether a sandbox's execd answers.",
			Long: "Ping the sandbox's execd. The answer is the output, not the exit code: an\n" +
				"unhealthy sandbox still exits 0 (read \"healthy\" under -o json). A sandbox\n" +
				"that does not exist, or a server that cannot be reached, is an error.",
			Run: runHealth,
		}),
		newCmdMetrics(f),
	)
	return cmd
}

// sandboxOptions is what a verb on one sandbox without flags of its own
// takes.
type sandboxOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
}

// sandboxVerb declares a verb on one sandbox without flags of its own.
func sandboxVerb(f *cmdutil.Factory, verb cmdutil.Verb[sandboxOptions]) *cobra.Command {
	opts := &sandboxOptions{}
	verb.Args = []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)}
	verb.Formats = cmdutil.TableFormats
	return cmdutil.NewVerb(f, opts, verb)
}

func runGet(ctx context.Context, opts *sandboxOptions) error {
	var sb *client.Sandbox
	err := opts.Sandbox.Do(ctx, func(c *client.Client, id string) error {
		var err error
		sb, err = c.GetSandbox(ctx, id)
		return err
	})
	if err != nil {
		return err
	}
	return opts.Printer().Object("Sandbox Info", ops.NewSandboxView(sb))
}

func runPause(ctx context.Context, opts *sandboxOptions) error {
	var paused string
	err := opts.Sandbox.Do(ctx, func(c *client.Client, id string) error {
		paused = id
		return c.PauseSandbox(ctx, id)
	})
	if err != nil {
		return err
	}
	return opts.Printer().Success("Pause request accepted: " + paused)
}
