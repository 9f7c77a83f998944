package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

func newCmdDelete(f *cmdutil.Factory, runF func(context.Context, *vaultOptions) error) *cobra.Command {
	opts := &vaultOptions{f: f}
	return newVaultCmd(opts, &cobra.Command{
		Use:   "delete SANDBOX_ID",
		Short: "Delete the sandbox-local Credential Vault.",
		Long:  "Delete a sandbox's Credential Vault with every credential and binding in it.",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context) error {
		if runF != nil {
			return runF(ctx, opts)
		}
		return runDelete(ctx, opts)
	})
}

func runDelete(ctx context.Context, opts *vaultOptions) error {
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
