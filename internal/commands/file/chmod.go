package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type chmodOptions struct {
	f          *cmdutil.Factory
	SandboxID  string
	Path       string
	Permission client.Permission
	Format     string
}

func newCmdChmod(f *cmdutil.Factory, runF func(context.Context, *chmodOptions) error) *cobra.Command {
	opts := &chmodOptions{f: f}
	var mode, owner, group string
	cmd := &cobra.Command{
		Use:   "chmod SANDBOX_ID PATH --mode MODE",
		Short: "Set the permissions (and owner) of a file in the sandbox.",
		Long: "Set PATH's permission to --mode, given as digits (644, 0755), and its owner\n" +
			"and group when --owner or --group is given.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Path = args[0], args[1]
			m, err := parseMode(mode)
			if err != nil {
				return err
			}
			opts.Permission = client.Permission{Mode: m, Owner: optional(cmd, "owner", owner), Group: optional(cmd, "group", group)}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runChmod(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "", "Permission mode, e.g. 644 or 0755 (required).")
	cmd.Flags().StringVar(&owner, "owner", "", "File owner.")
	cmd.Flags().StringVar(&group, "group", "", "File group.")
	_ = cmd.MarkFlagRequired("mode")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runChmod(ctx context.Context, opts *chmodOptions) error {
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	if err := dp.SetPermissions(ctx, map[string]client.Permission{opts.Path: opts.Permission}); err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Success("Permissions set: " + opts.Path)
}
