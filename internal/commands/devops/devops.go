// Package devops implements the `osb devops` commands.
package devops

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdDevops returns the `devops` group.
func NewCmdDevops(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("devops", "Experimental diagnostics for sandbox troubleshooting.")
	return cmd
}
