package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type rmOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Paths     []string
	Format    string
}

func newCmdRm(f *cmdutil.Factory, runF func(context.Context, *rmOptions) error) *cobra.Command {
	opts := &rmOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rm SANDBOX_ID PATH...",
		Short: "Delete files from the sandbox.",
		Long: "Delete files in one request. A path that does not exist is not an error;\n" +
			"a directory is (use 'osb file rmdir').",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Paths = args[0], args[1:]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRm(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runRm(ctx context.Context, opts *rmOptions) error {
	return changePaths(ctx, opts.f, opts.SandboxID, opts.Paths, opts.Format, "Deleted Files", "deleted",
		func(dp *client.DataPlane) error { return dp.DeleteFiles(ctx, opts.Paths) })
}
