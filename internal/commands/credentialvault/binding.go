package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdBindingList(f *cmdutil.Factory, runF func(context.Context, *vaultOptions) error) *cobra.Command {
	opts := &vaultOptions{f: f}
	return newVaultCmd(opts, &cobra.Command{
		Use:   "list SANDBOX_ID",
		Short: "List sanitized binding metadata.",
		Long:  "List the bindings of a sandbox's Credential Vault: name, revision, the requests\nit matches and its auth type. Credentials are named, never shown.",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context) error {
		if runF != nil {
			return runF(ctx, opts)
		}
		return runBindingList(ctx, opts)
	})
}

func runBindingList(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	bs, err := v.ListBindings(ctx)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).List("Credential Vault Bindings",
		[]string{"name", "revision", "match", "auth"}, bindingViews(bs))
}

func newCmdBindingGet(f *cmdutil.Factory, runF func(context.Context, *vaultOptions) error) *cobra.Command {
	opts := &vaultOptions{f: f}
	return newVaultCmd(opts, &cobra.Command{
		Use:   "get SANDBOX_ID NAME",
		Short: "Get sanitized metadata for one binding.",
		Args:  cobra.ExactArgs(2),
	}, func(ctx context.Context) error {
		if runF != nil {
			return runF(ctx, opts)
		}
		return runBindingGet(ctx, opts)
	})
}

func runBindingGet(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	b, err := v.GetBinding(ctx, opts.Name)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Object("Credential Vault Binding", newBindingView(*b))
}
