// Package command implements `osb command`: run a command in a sandbox in
// the foreground (streamed, with the remote exit code) or the background,
// follow a background command's status and logs, interrupt it, and run
// commands in bash sessions that keep their state.
package command

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdCommand returns the `command` group.
func NewCmdCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("command", "⚡ Execute commands in a sandbox.")
	cmd.AddCommand(
		newCmdRun(f),
		newCmdStatus(f),
		newCmdLogs(f),
		newCmdInterrupt(f),
		newCmdSession(f),
		newCmdShellGroup(f),
	)
	return cmd
}
