package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type mvOptions struct {
	f           *cmdutil.Factory
	SandboxID   string
	Source      string
	Destination string
	Format      string
}

func newCmdMv(f *cmdutil.Factory, runF func(context.Context, *mvOptions) error) *cobra.Command {
	opts := &mvOptions{f: f}
	cmd := &cobra.Command{
		Use:   "mv SANDBOX_ID SOURCE DESTINATION",
		Short: "Move or rename a file or directory in the sandbox.",
		Long: "Move SOURCE to DESTINATION, creating DESTINATION's missing parent\n" +
			"directories. An existing DESTINATION is never replaced: the move fails.",
		Args:              cobra.ExactArgs(3),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Source, opts.Destination = args[0], args[1], args[2]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMv(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runMv(ctx context.Context, opts *mvOptions) error {
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	if err := dp.MoveFiles(ctx, []client.Move{{Src: opts.Source, Dest: opts.Destination}}); err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Success("Moved: " + opts.Source + " → " + opts.Destination)
}
