// Package diagnostics implements the `osb diagnostics` commands.
package diagnostics

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdDiagnostics returns the `diagnostics` group.
func NewCmdDiagnostics(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("diagnostics", "Stable sandbox diagnostics: scoped logs and events.")
	return cmd
}
