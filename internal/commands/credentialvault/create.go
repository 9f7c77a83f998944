package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type createOptions struct {
	vaultOptions
	File    string
	Request *client.CredentialVaultCreate
}

func newCmdCreate(f *cmdutil.Factory, runF func(context.Context, *createOptions) error) *cobra.Command {
	opts := &createOptions{vaultOptions: vaultOptions{f: f}}
	cmd := newVaultCmd(&opts.vaultOptions, &cobra.Command{
		Use:   "create SANDBOX_ID --file PATH",
		Short: "Create the initial Credential Vault state.",
		Long: "Create a sandbox's Credential Vault from a JSON or YAML payload with two lists:\n" +
			"credentials ({name, source: {type: inline, value}}) and bindings ({name, match,\n" +
			"auth}). --file - reads the payload from stdin. Values are write-only: they are\n" +
			"sent to the sandbox's egress sidecar and never shown again.",
		Example: "  osb credential-vault create sbx-123 --file vault.yaml\n  cat vault.json | osb credential-vault create sbx-123 --file -",
		Args:    cobra.ExactArgs(1),
	}, func(ctx context.Context) error {
		var err error
		if opts.Request, err = readPayload(f, opts.File, createRequest); err != nil {
			return err
		}
		if runF != nil {
			return runF(ctx, opts)
		}
		return runCreate(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.File, "file", "", "JSON/YAML payload file, or '-' to read from stdin (required).")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func runCreate(ctx context.Context, opts *createOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	st, err := v.Create(ctx, opts.Request)
	if err != nil {
		return err
	}
	return printState(&opts.vaultOptions, st)
}
