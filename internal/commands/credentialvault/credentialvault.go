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
	credential.AddCommand(newCmdCredentialList(f), newCmdCredentialGet(f))
	binding := cmdutil.NewGroup("binding", "Inspect sanitized Credential Vault binding metadata.")
	binding.AddCommand(newCmdBindingList(f), newCmdBindingGet(f))
	cmd.AddCommand(
		newCmdCreate(f),
		newCmdGet(f),
		newCmdPatch(f),
		newCmdDelete(f),
		credential,
		binding,
	)
	return cmd
}

// vaultOptions is what every credential-vault command has: the sandbox,
// and the credential or binding a get command names.
type vaultOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Name    string
}

// args are SANDBOX_ID, then NAME for a get of one credential or binding.
func (o *vaultOptions) args(named bool) []cmdutil.Arg {
	args := []cmdutil.Arg{cmdutil.SandboxArg(&o.Sandbox)}
	if named {
		args = append(args, cmdutil.StringArg("NAME", &o.Name))
	}
	return args
}

// printState shows the whole vault, as create, get and patch do.
func printState(opts *vaultOptions, st *client.CredentialVaultState) error {
	return opts.Printer().Object("Credential Vault", newStateView(st))
}

// connect reaches the vault of a sandbox (by id or unique prefix); a
// sandbox made from a template has none, which is an error.
func connect(ctx context.Context, sb cmdutil.Sandbox) (*client.CredentialVault, string, error) {
	eg, err := sb.Egress(ctx)
	if err != nil {
		return nil, "", err
	}
	v, err := eg.CredentialVault()
	return v, eg.SandboxID(), err
}
