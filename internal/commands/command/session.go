package command

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// newCmdSession returns the `command session` group.
func newCmdSession(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("session", "Manage persistent bash sessions.")
	cmd.Long = "A session is one bash shell that stays alive between runs: the working directory,\n" +
		"exported variables and functions of one run are there for the next."
	cmd.AddCommand(
		newCmdSessionCreate(f),
		newCmdSessionRun(f),
		newCmdSessionDelete(f),
	)
	return cmd
}
