package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type patchOptions struct {
	vaultOptions
	File string
}

func newCmdPatch(f *cmdutil.Factory) *cobra.Command {
	opts := &patchOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[patchOptions]{
		Name:    "patch",
		UseTail: "--file PATH",
		Short:   "Atomically mutate credentials and bindings.",
		Long: "Apply one atomic change to a sandbox's Credential Vault. The JSON or YAML payload\n" +
			"has credentials and/or bindings objects, each with add, replace and delete lists,\n" +
			"and optionally expectedRevision: the change then fails (exit 1) if the vault moved\n" +
			"on since that revision. --file - reads the payload from stdin.",
		Example: "  osb credential-vault patch sbx-123 --file rotate.yaml",
		Args:    opts.args(false),
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.File, "file", "", "JSON/YAML mutation payload file, or '-' to read from stdin (required).")
			fs.Required("file")
		},
		Run: runPatch,
	})
}

func runPatch(ctx context.Context, opts *patchOptions) error {
	req, err := readPayload(opts.Factory, opts.File, patchRequest)
	if err != nil {
		return err
	}
	v, _, err := connect(ctx, opts.Sandbox)
	if err != nil {
		return err
	}
	st, err := v.Patch(ctx, req)
	if err != nil {
		return err
	}
	return printState(&opts.vaultOptions, st)
}
