// Package file implements the `osb file` commands.
package file

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdFile returns the `file` group.
func NewCmdFile(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("file", "📁 File operations on a sandbox.")
	return cmd
}
