package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type rmdirOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Paths     []string
	Format    string
}

func newCmdRmdir(f *cmdutil.Factory, runF func(context.Context, *rmdirOptions) error) *cobra.Command {
	opts := &rmdirOptions{f: f}
	cmd := &cobra.Command{
		Use:   "rmdir SANDBOX_ID PATH...",
		Short: "Delete directories and everything in them.",
		Long: "Delete each directory with everything below it, like rm -rf. A path that\n" +
			"does not exist is not an error, and a plain file is deleted too.",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Paths = args[0], args[1:]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRmdir(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runRmdir(ctx context.Context, opts *rmdirOptions) error {
	return changePaths(ctx, opts.f, opts.SandboxID, opts.Paths, opts.Format, "Removed Directories", "removed",
		func(dp *client.DataPlane) error { return dp.DeleteDirectories(ctx, opts.Paths) })
}
