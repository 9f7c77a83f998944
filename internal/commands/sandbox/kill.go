package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type killOptions struct {
	f          *cmdutil.Factory
	SandboxIDs []string
	Format     string
}

func newCmdKill(f *cmdutil.Factory, runF func(context.Context, *killOptions) error) *cobra.Command {
	opts := &killOptions{f: f}
	cmd := &cobra.Command{
		Use:   "kill SANDBOX_ID...",
		Short: "Delete one or more sandboxes.",
		Long: "Delete sandboxes one after the other. The first failure stops the command:\n" +
			"sandboxes before it are already gone, and nothing is printed but the error.\n" +
			"Each SANDBOX_ID may be any unique prefix of an id.",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxIDs = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runKill(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runKill(ctx context.Context, opts *killOptions) error {
	rows := make([]output.Obj, 0, len(opts.SandboxIDs))
	for _, id := range opts.SandboxIDs {
		err := opts.f.WithSandbox(ctx, id, func(c *client.Client, full string) error {
			if err := c.DeleteSandbox(ctx, full); err != nil {
				return err
			}
			rows = append(rows, output.Obj{{Key: "sandbox_id", Value: full}, {Key: "status", Value: "terminated"}})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return opts.f.Printer(opts.Format).List("Sandboxes", []string{"sandbox_id", "status"}, rows)
}
