// Package credentialvault implements the `osb credential-vault` commands:
// the sandbox-local Credential Vault kept by a sandbox's egress sidecar.
// Secret values go in through payload files or stdin only (never flags),
// travel to the sidecar, and are never printed, logged or echoed in errors.
package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdCredentialVault returns the `credential-vault` group.
func NewCmdCredentialVault(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("credential-vault", "Manage sandbox-local Credential Vault state.")
	credential := cmdutil.NewGroup("credential", "Inspect sanitized Credential Vault credential metadata.")
	credential.AddCommand(newCmdCredentialList(f, nil), newCmdCredentialGet(f, nil))
	binding := cmdutil.NewGroup("binding", "Inspect sanitized Credential Vault binding metadata.")
	binding.AddCommand(newCmdBindingList(f, nil), newCmdBindingGet(f, nil))
	cmd.AddCommand(
		newCmdCreate(f, nil),
		newCmdGet(f, nil),
		newCmdPatch(f, nil),
		newCmdDelete(f, nil),
		credential,
		binding,
	)
	return cmd
}

// vaultOptions is what every credential-vault command has: the sandbox,
// the credential or binding a get command names, and the output format.
type vaultOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Name      string
	Format    string
}

// newVaultCmd completes cmd (its Use, help and Args set by the caller) as a
// credential-vault command: SANDBOX_ID then, for a get, NAME; sandbox id
// completion; -o table|json|yaml. run does the work once opts is filled.
func newVaultCmd(opts *vaultOptions, cmd *cobra.Command, run func(context.Context) error) *cobra.Command {
	cmd.ValidArgsFunction = cmdutil.CompleteSandboxIDs(opts.f, false)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.SandboxID = args[0]
		if len(args) > 1 {
			opts.Name = args[1]
		}
		return run(cmd.Context())
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

// printState shows the whole vault, as create, get and patch do.
func printState(opts *vaultOptions, st *client.CredentialVaultState) error {
	return opts.f.Printer(opts.Format).Object("Credential Vault", newStateView(st))
}

// connect reaches the vault of a sandbox (by id or unique prefix); a
// sandbox made from a template has none, which is an error.
func connect(ctx context.Context, f *cmdutil.Factory, sandboxID string) (*client.CredentialVault, string, error) {
	eg, err := f.Egress(ctx, sandboxID)
	if err != nil {
		return nil, "", err
	}
	v, err := eg.CredentialVault()
	return v, eg.SandboxID(), err
}
