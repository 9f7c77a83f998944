package cmdutil

import (
	"errors"
	"fmt"
	"github.com/osb-dev/osb/internal/ops"

	"github.com/spf13/cobra"
)

// NewGroup returns a command that only holds subcommands: alone it prints
// its help and exits 0, as the official client's groups do; an unknown
// subcommand is a usage error that suggests the nearest one.
func NewGroup(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  KnownSubcommand,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
}

// KnownSubcommand refuses a word that is not one of cmd's subcommands.
func KnownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return UnknownCommand(cmd, args[0], "command")
	}
	return nil
}

// UnknownCommand is the usage error for a word that names no subcommand of
// cmd (what is "command" or "help topic"), with the nearest names when
// some are close: "Did you mean ...?".
func UnknownCommand(cmd *cobra.Command, word, what string) error {
	msg := fmt.Sprintf("unknown %s %q for %q", what, word, cmd.CommandPath())
	msg += didYouMean(subcommandSuggestions(cmd, word))
	return &ops.FlagError{Err: errors.New(msg)}
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
