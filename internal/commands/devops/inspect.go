package devops

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdInspect(f *cmdutil.Factory) *cobra.Command {
	opts := &textOptions{}
	return cmdutil.NewVerb(f, opts, textVerb("inspect", "Print the server's detailed inspection of a sandbox.", &opts.Sandbox, nil,
		func(ctx context.Context, opts *textOptions) error { return printText(ctx, opts, "inspect", nil) }))
}
