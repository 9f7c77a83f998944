// Package template implements the `osb template` commands.
package template

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdTemplate returns the `template` group.
func NewCmdTemplate(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("template", "🏗 Manage sandbox templates (golden-image builds).")
	return cmd
}
