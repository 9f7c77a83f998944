package skills

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type uninstallOptions struct {
	f *cmdutil.Factory
	selection
}

func newCmdUninstall(f *cmdutil.Factory, runF func(*uninstallOptions) error) *cobra.Command {
	opts := &uninstallOptions{f: f, selection: selection{Getwd: os.Getwd}}
	cmd := &cobra.Command{
		Use:   "uninstall [SKILL]",
		Short: "Remove an installed skill from an AI coding tool.",
		Long: "Remove what 'osb skills install' wrote for SKILL (default " + defaultSkill + ").\n\n" +
			"Files osb wrote are deleted, and then the directories that held them while they are\n" +
			"empty. In a shared instructions file only the skill's marked block is removed; the\n" +
			"rest of the file stays as it was. Each skill is reported as removed or not_installed.",
		Example: "  osb skills uninstall sandbox-lifecycle --target claude --scope project\n" +
			"  osb skills uninstall --all-builtins --target all --scope global",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Skill = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runUninstall(opts)
		},
	}
	opts.addFlags(cmd, "Remove every bundled skill.")
	return cmd
}

func runUninstall(opts *uninstallOptions) error {
	p, chosen, tools, err := opts.resolve(opts.f, defaultSkill)
	if err != nil {
		return err
	}
	ops, err := apply(p, chosen, tools, uninstall)
	if err != nil {
		return err
	}
	if done, err := printStructured(opts.f, opts.Format, ops); done {
		return err
	}
	writeOperations(opts.f.IOStreams.Out, ops)
	return nil
}
