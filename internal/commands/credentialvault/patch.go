package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type patchOptions struct {
	vaultOptions
	File    string
	Request *client.CredentialVaultPatch
}

func newCmdPatch(f *cmdutil.Factory, runF func(context.Context, *patchOptions) error) *cobra.Command {
	opts := &patchOptions{vaultOptions: vaultOptions{f: f}}
	cmd := newVaultCmd(&opts.vaultOptions, &cobra.Command{
		Use:   "patch SANDBOX_ID --file PATH",
		Short: "Atomically mutate credentials and bindings.",
		Long: "Apply one atomic change to a sandbox's Credential Vault. The JSON or YAML payload\n" +
			"has credentials and/or bindings objects, each with add, replace and delete lists,\n" +
			"and optionally expectedRevision: the change then fails (exit 1) if the vault moved\n" +
			"on since that revision. --file - reads the payload from stdin.",
		Example: "  osb credential-vault patch sbx-123 --file rotate.yaml",
		Args:    cobra.ExactArgs(1),
	}, func(ctx context.Context) error {
		var err error
		if opts.Request, err = readPayload(f, opts.File, patchRequest); err != nil {
			return err
		}
		if runF != nil {
			return runF(ctx, opts)
		}
		return runPatch(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.File, "file", "", "JSON/YAML mutation payload file, or '-' to read from stdin (required).")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func runPatch(ctx context.Context, opts *patchOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	st, err := v.Patch(ctx, opts.Request)
	if err != nil {
		return err
	}
	return printState(&opts.vaultOptions, st)
}
