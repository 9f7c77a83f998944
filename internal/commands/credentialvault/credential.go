package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdCredentialList(f *cmdutil.Factory, runF func(context.Context, *vaultOptions) error) *cobra.Command {
	opts := &vaultOptions{f: f}
	return newVaultCmd(opts, &cobra.Command{
		Use:   "list SANDBOX_ID",
		Short: "List sanitized credential metadata.",
		Long:  "List the credentials of a sandbox's Credential Vault: name, source type and the\nrevision that last set it. Values are never shown.",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context) error {
		if runF != nil {
			return runF(ctx, opts)
		}
		return runCredentialList(ctx, opts)
	})
}

func runCredentialList(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	cs, err := v.ListCredentials(ctx)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).List("Credential Vault Credentials",
		[]string{"name", "source_type", "revision"}, credentialViews(cs))
}

func newCmdCredentialGet(f *cmdutil.Factory, runF func(context.Context, *vaultOptions) error) *cobra.Command {
	opts := &vaultOptions{f: f}
	return newVaultCmd(opts, &cobra.Command{
		Use:   "get SANDBOX_ID NAME",
		Short: "Get sanitized metadata for one credential.",
		Args:  cobra.ExactArgs(2),
	}, func(ctx context.Context) error {
		if runF != nil {
			return runF(ctx, opts)
		}
		return runCredentialGet(ctx, opts)
	})
}

func runCredentialGet(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	c, err := v.GetCredential(ctx, opts.Name)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Object("Credential Vault Credential", newCredentialView(*c))
}
