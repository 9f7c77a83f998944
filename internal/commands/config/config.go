// Package config implements `osb config`: init, show, get and set of the
// TOML config file. None of these commands talks to a server.
package config

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdConfig returns the `config` group.
func NewCmdConfig(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("config", "⚙️  Manage CLI configuration.")
	// A broken config file must not stop the commands that repair it.
	cmd.Annotations = map[string]string{cmdutil.NoConfig: ""}
	cmd.AddCommand(
		newCmdInit(f),
		newCmdShow(f),
		newCmdGet(f),
		newCmdSet(f),
	)
	return cmd
}
