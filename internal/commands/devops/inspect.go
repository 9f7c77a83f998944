package devops

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdInspect(f *cmdutil.Factory, runF func(context.Context, *textOptions) error) *cobra.Command {
	opts := &textOptions{f: f}
	return newTextCmd(opts, "inspect SANDBOX_ID", "Print the server's detailed inspection of a sandbox.",
		func(ctx context.Context) error {
			if runF != nil {
				return runF(ctx, opts)
			}
			return printText(ctx, opts, "inspect", nil)
		})
}
