package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdRm(f *cmdutil.Factory) *cobra.Command {
	opts := &pathsOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[pathsOptions]{
		Name:  "rm",
		Short: "Delete files from the sandbox.",
		Long: "Delete files in one request. A path that does not exist is not an error;\n" +
			"a directory is (use 'osb file rmdir').",
		Args:    opts.args(),
		Formats: cmdutil.TableFormats,
		Run: func(ctx context.Context, opts *pathsOptions) error {
			return changePaths(ctx, opts, "Deleted Files", "deleted",
				func(dp *client.DataPlane) error { return dp.DeleteFiles(ctx, opts.Paths) })
		},
	})
}
