package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type pauseOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
}

func newCmdPause(f *cmdutil.Factory) *cobra.Command {
	opts := &pauseOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[pauseOptions]{
		Name:  "pause",
		Short: "Ask the server to pause a sandbox.",
		Long: "Ask the server to pause a sandbox. The pause completes in the background:\n" +
			"'osb sandbox get' shows Pausing, then Paused.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Run:     runPause,
	})
}

func runPause(ctx context.Context, opts *pauseOptions) error {
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
