package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type deleteOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Format    string
}

func newCmdDelete(f *cmdutil.Factory, runF func(context.Context, *deleteOptions) error) *cobra.Command {
	opts := &deleteOptions{f: f}
	cmd := &cobra.Command{
		Use:               "delete SANDBOX_ID",
		Short:             "Delete the sandbox-local Credential Vault.",
		Long:              "Delete a sandbox's Credential Vault with every credential and binding in it.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDelete(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runDelete(ctx context.Context, opts *deleteOptions) error {
	v, id, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	if err := v.Delete(ctx); err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Panel("Credential Vault Deleted", output.Obj{
		{Key: "sandbox_id", Value: id},
		{Key: "status", Value: "deleted"},
	})
}
