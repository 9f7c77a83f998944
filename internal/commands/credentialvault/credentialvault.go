// Package credentialvault implements the `osb credential-vault` commands.
package credentialvault

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdCredentialVault returns the `credential-vault` group.
func NewCmdCredentialVault(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("credential-vault", "Manage sandbox-local Credential Vault state.")
	return cmd
}
