package cmdutil

import (
	"github.com/spf13/cobra"
)

// NewGroup returns a command that only holds subcommands: alone it prints
// its help and exits 0; an unknown subcommand is a usage error.
func NewGroup(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
}

// NoConfig marks a command (and everything below it) as not needing the
// config file, so a broken file cannot stop it.
const NoConfig = "osb:no-config"

// SkipsConfig reports whether cmd or a parent is marked NoConfig. Cobra's
// own help and __complete commands count as marked: help reads no config,
// and __complete parses the completed command's flags itself, after the
// root's hooks, so a completion that needs the config loads it then (a
// broken file then only means no candidates).
func SkipsConfig(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if _, ok := c.Annotations[NoConfig]; ok || c.Name() == cobra.ShellCompRequestCmd || c.Name() == "help" {
			return true
		}
	}
	return false
}
