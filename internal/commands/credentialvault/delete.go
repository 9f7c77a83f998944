package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdDelete(f *cmdutil.Factory) *cobra.Command {
	opts := &vaultOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[vaultOptions]{
		Name:    "delete",
		Short:   "Delete the sandbox-local Credential Vault.",
		Long:    "Delete a sandbox's Credential Vault with every credential and binding in it.",
		Args:    opts.args(false),
		Formats: cmdutil.TableFormats,
		Run:     runDelete,
	})
}

// deletedView is what delete prints.
type deletedView struct {
	SandboxID string `json:"sandbox_id"`
	Status    string `json:"status"`
}

func runDelete(ctx context.Context, opts *vaultOptions) error {
	v, id, err := connect(ctx, opts.Sandbox)
	if err != nil {
		return err
	}
	if err := v.Delete(ctx); err != nil {
		return err
	}
	return opts.Printer().Panel("Credential Vault Deleted", deletedView{SandboxID: id, Status: "deleted"})
}
