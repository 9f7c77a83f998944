package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdCredentialList(f *cmdutil.Factory) *cobra.Command {
	opts := &vaultOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[vaultOptions]{
		Name:    "list",
		Short:   "List sanitized credential metadata.",
		Long:    "List the credentials of a sandbox's Credential Vault: name, source type and the\nrevision that last set it. Values are never shown.",
		Args:    opts.args(false),
		Formats: cmdutil.TableFormats,
		Run:     runCredentialList,
	})
}

func runCredentialList(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.Sandbox)
	if err != nil {
		return err
	}
	cs, err := v.ListCredentials(ctx)
	if err != nil {
		return err
	}
	return opts.Printer().List("Credential Vault Credentials", credentialViews(cs))
}

func newCmdCredentialGet(f *cmdutil.Factory) *cobra.Command {
	opts := &vaultOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[vaultOptions]{
		Name:    "get",
		Short:   "Get sanitized metadata for one credential.",
		Args:    opts.args(true),
		Formats: cmdutil.TableFormats,
		Run:     runCredentialGet,
	})
}

func runCredentialGet(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.Sandbox)
	if err != nil {
		return err
	}
	c, err := v.GetCredential(ctx, opts.Name)
	if err != nil {
		return err
	}
	return opts.Printer().Object("Credential Vault Credential", newCredentialView(*c))
}
