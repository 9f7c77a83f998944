package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type getOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
}

func newCmdGet(f *cmdutil.Factory) *cobra.Command {
	opts := &getOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[getOptions]{
		Name:    "get",
		Short:   "Show one sandbox.",
		Long:    "Show one sandbox. SANDBOX_ID may be any unique prefix of the id.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Run:     runGet,
	})
}

func runGet(ctx context.Context, opts *getOptions) error {
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
