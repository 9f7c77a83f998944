package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdGet(f *cmdutil.Factory, runF func(context.Context, *vaultOptions) error) *cobra.Command {
	opts := &vaultOptions{f: f}
	return newVaultCmd(opts, &cobra.Command{
		Use:   "get SANDBOX_ID",
		Short: "Get sanitized Credential Vault state.",
		Long:  "Show the Credential Vault's revision, credentials (names, source types, revisions)\nand bindings (match and auth type). Secret values are never shown.",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context) error {
		if runF != nil {
			return runF(ctx, opts)
		}
		return runGet(ctx, opts)
	})
}

func runGet(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	st, err := v.Get(ctx)
	if err != nil {
		return err
	}
	return printState(opts, st)
}
