package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type createOptions struct {
	vaultOptions
	File string
}

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	opts := &createOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[createOptions]{
		Name:    "create",
		UseTail: "--file PATH",
		Short:   "Create the initial Credential Vault state.",
		Long: "Create a sandbox's Credential Vault from a JSON or YAML payload with two lists:\n" +
			"credentials ({name, source: {type: inline, value}}) and bindings ({name, match,\n" +
			"auth}). --file - reads the payload from stdin. Values are write-only: they are\n" +
			"sent to the sandbox's egress sidecar and never shown again.",
		Example: "  osb credential-vault create sbx-123 --file vault.yaml\n  cat vault.json | osb credential-vault create sbx-123 --file -",
		Args:    opts.args(false),
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.File, "file", "", "JSON/YAML payload file, or '-' to read from stdin (required).")
			fs.Required("file")
		},
		Run: runCreate,
	})
}

func runCreate(ctx context.Context, opts *createOptions) error {
	req, err := readPayload(opts.Factory, opts.File, createRequest)
	if err != nil {
		return err
	}
	v, _, err := connect(ctx, opts.Sandbox)
	if err != nil {
		return err
	}
	st, err := v.Create(ctx, req)
	if err != nil {
		return err
	}
	return printState(&opts.vaultOptions, st)
}
