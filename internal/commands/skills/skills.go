// Package skills implements `osb skills`: list, show, install and uninstall
// the skill files bundled with osb for coding agents (Claude Code, Cursor,
// Codex, GitHub Copilot, Windsurf, Cline, OpenCode). Nothing here talks to a
// server or reads the config file.
package skills

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdSkills returns the `skills` group.
func NewCmdSkills(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("skills", "Manage bundled OpenSandbox skills for AI coding tools.")
	cmd.Long = "Manage the OpenSandbox skills bundled with osb for AI coding tools.\n\n" +
		"See what is bundled with 'osb skills list' and read one with 'osb skills show <skill>',\n" +
		"then install it without prompts, e.g. 'osb skills install <skill> --target codex --scope project'."
	cmd.Annotations = map[string]string{cmdutil.NoConfig: ""}
	cmd.AddCommand(
		newCmdList(f, nil),
		newCmdShow(f),
		newCmdInstall(f, nil),
		newCmdUninstall(f, nil),
	)
	return cmd
}
