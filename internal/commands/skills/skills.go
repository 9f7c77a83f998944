// Package skills implements the `osb skills` commands.
package skills

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdSkills returns the `skills` group.
func NewCmdSkills(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("skills", "Manage bundled OpenSandbox skills for AI coding tools.")
	return cmd
}
