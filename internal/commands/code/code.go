// Package code implements `osb code`: run code in a sandbox's code
// interpreter (execd's /code API, on Jupyter kernels inside the sandbox),
// in contexts that keep their state between runs.
package code

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdCode returns the `code` group.
func NewCmdCode(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("code", "🐍 Run code in a sandbox's code interpreter (Jupyter kernels).")
	cmd.AddCommand(newCmdRun(f), newCmdContext(f))
	return cmd
}

// newCmdContext returns the `code context` group.
func newCmdContext(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("context", "Manage code contexts: kernels that keep their state between runs.")
	cmd.AddCommand(newCmdContextCreate(f), newCmdContextList(f), newCmdContextDelete(f))
	return cmd
}
