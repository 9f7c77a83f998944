package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type mkdirOptions struct {
	pathsOptions
	perm permFlags
}

func newCmdMkdir(f *cmdutil.Factory) *cobra.Command {
	opts := &mkdirOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[mkdirOptions]{
		Name:  "mkdir",
		Short: "Create directories in the sandbox.",
		Long: "Create each directory with its missing parents, like mkdir -p. --mode,\n" +
			"--owner and --group apply to a directory this creates; an existing one is\n" +
			"left as it is. --mode is the permission as digits, e.g. 750 (default 755).",
		Args:    opts.args(),
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			opts.perm.add(fs, "Directory permission mode, e.g. 755 (default 755).", "Directory")
		},
		Run: runMkdir,
	})
}

func runMkdir(ctx context.Context, opts *mkdirOptions) error {
	perm, err := opts.perm.permission()
	if err != nil {
		return err
	}
	dirs := make(map[string]client.Permission, len(opts.Paths))
	for _, p := range opts.Paths {
		dirs[p] = perm
	}
	return changePaths(ctx, &opts.pathsOptions, "Created Directories", "created",
		func(dp *client.DataPlane) error { return dp.CreateDirectories(ctx, dirs) })
}
