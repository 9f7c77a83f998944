package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type getOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Format    string
}

func newCmdGet(f *cmdutil.Factory, runF func(context.Context, *getOptions) error) *cobra.Command {
	opts := &getOptions{f: f}
	cmd := &cobra.Command{
		Use:               "get SANDBOX_ID",
		Short:             "Show one sandbox.",
		Long:              "Show one sandbox. SANDBOX_ID may be any unique prefix of the id.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runGet(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runGet(ctx context.Context, opts *getOptions) error {
	var sb *client.Sandbox
	err := opts.f.WithSandbox(ctx, opts.SandboxID, func(c *client.Client, id string) error {
		var err error
		sb, err = c.GetSandbox(ctx, id)
		return err
	})
	if err != nil {
		return err
	}
	view := newSandboxView(sb)
	return cmdutil.PrintRecord(opts.f.Printer(opts.Format), "Sandbox Info", view, view.record())
}
