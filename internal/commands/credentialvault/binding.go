package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdBindingList(f *cmdutil.Factory) *cobra.Command {
	opts := &vaultOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[vaultOptions]{
		Name:    "list",
		Short:   "List sanitized binding metadata.",
		Long:    "List the bindings of a sandbox's Credential Vault: name, revision, the requests\nit matches and its auth type. Credentials are named, never shown.",
		Args:    opts.args(false),
		Formats: cmdutil.TableFormats,
		Run:     runBindingList,
	})
}

func runBindingList(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.Sandbox)
	if err != nil {
		return err
	}
	bs, err := v.ListBindings(ctx)
	if err != nil {
		return err
	}
	return opts.Printer().List("Credential Vault Bindings", bindingViews(bs))
}

func newCmdBindingGet(f *cmdutil.Factory) *cobra.Command {
	opts := &vaultOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[vaultOptions]{
		Name:    "get",
		Short:   "Get sanitized metadata for one binding.",
		Args:    opts.args(true),
		Formats: cmdutil.TableFormats,
		Run:     runBindingGet,
	})
}

func runBindingGet(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.Sandbox)
	if err != nil {
		return err
	}
	b, err := v.GetBinding(ctx, opts.Name)
	if err != nil {
		return err
	}
	return opts.Printer().Object("Credential Vault Binding", newBindingView(*b))
}
