package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdGet(f *cmdutil.Factory) *cobra.Command {
	opts := &vaultOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[vaultOptions]{
		Name:    "get",
		Short:   "Get sanitized Credential Vault state.",
		Long:    "Show the Credential Vault's revision, credentials (names, source types, revisions)\nand bindings (match and auth type). Secret values are never shown.",
		Args:    opts.args(false),
		Formats: cmdutil.TableFormats,
		Run:     runGet,
	})
}

func runGet(ctx context.Context, opts *vaultOptions) error {
	v, _, err := connect(ctx, opts.Sandbox)
	if err != nil {
		return err
	}
	st, err := v.Get(ctx)
	if err != nil {
		return err
	}
	return printState(opts, st)
}
