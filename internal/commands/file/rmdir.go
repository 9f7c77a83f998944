package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdRmdir(f *cmdutil.Factory) *cobra.Command {
	opts := &pathsOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[pathsOptions]{
		Name:  "rmdir",
		Short: "Delete directories and everything in them.",
		Long: "Delete each directory with everything below it, like rm -rf. A path that\n" +
			"does not exist is not an error, and a plain file is deleted too.",
		Args:    opts.args(),
		Formats: cmdutil.TableFormats,
		Run: func(ctx context.Context, opts *pathsOptions) error {
			return changePaths(ctx, opts, "Removed Directories", "removed",
				func(dp *client.DataPlane) error { return dp.DeleteDirectories(ctx, opts.Paths) })
		},
	})
}
