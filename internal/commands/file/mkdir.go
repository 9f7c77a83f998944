package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type mkdirOptions struct {
	f          *cmdutil.Factory
	SandboxID  string
	Paths      []string
	Permission client.Permission
	Format     string
}

func newCmdMkdir(f *cmdutil.Factory, runF func(context.Context, *mkdirOptions) error) *cobra.Command {
	opts := &mkdirOptions{f: f}
	var mode, owner, group string
	cmd := &cobra.Command{
		Use:   "mkdir SANDBOX_ID PATH...",
		Short: "Create directories in the sandbox.",
		Long: "Create each directory with its missing parents, like mkdir -p. --mode,\n" +
			"--owner and --group apply to a directory this creates; an existing one is\n" +
			"left as it is. --mode is the permission as digits, e.g. 750 (default 755).",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Paths = args[0], args[1:]
			m, err := modeFlag(cmd, mode)
			if err != nil {
				return err
			}
			opts.Permission = client.Permission{Mode: m, Owner: optional(cmd, "owner", owner), Group: optional(cmd, "group", group)}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMkdir(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "", "Directory permission mode, e.g. 755 (default 755).")
	cmd.Flags().StringVar(&owner, "owner", "", "Directory owner.")
	cmd.Flags().StringVar(&group, "group", "", "Directory group.")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runMkdir(ctx context.Context, opts *mkdirOptions) error {
	dirs := make(map[string]client.Permission, len(opts.Paths))
	for _, p := range opts.Paths {
		dirs[p] = opts.Permission
	}
	return changePaths(ctx, opts.f, opts.SandboxID, opts.Paths, opts.Format, "Created Directories", "created",
		func(dp *client.DataPlane) error { return dp.CreateDirectories(ctx, dirs) })
}
