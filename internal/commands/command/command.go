// Package command implements the `osb command` commands.
package command

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdCommand returns the `command` group.
func NewCmdCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("command", "⚡ Execute commands in a sandbox.")
	return cmd
}
