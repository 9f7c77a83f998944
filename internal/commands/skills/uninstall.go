package skills

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type uninstallOptions struct {
	cmdutil.Base
	selection
}

// newCmdUninstall builds uninstall; runF, when not nil, replaces
// runUninstall (tests point the project scope elsewhere with it).
func newCmdUninstall(f *cmdutil.Factory, runF func(context.Context, *uninstallOptions) error) *cobra.Command {
	opts := &uninstallOptions{selection: selection{Getwd: os.Getwd}}
	v := cmdutil.Verb[uninstallOptions]{
		Name:  "uninstall",
		Short: "Remove an installed skill from an AI coding tool.",
		Long: "Remove what 'osb skills install' wrote for SKILL (default " + defaultSkill + ").\n\n" +
			"Files osb wrote are deleted, and then the directories that held them while they are\n" +
			"empty. In a shared instructions file only the skill's marked block is removed; the\n" +
			"rest of the file stays as it was. Each skill is reported as removed or not_installed.",
		Example: "  osb skills uninstall sandbox-lifecycle --target claude --scope project\n" +
			"  osb skills uninstall --all-builtins --target all --scope global",
		Args:    []cmdutil.Arg{cmdutil.OptionalArg("SKILL", &opts.Skill)},
		Formats: cmdutil.TableFormats,
		Flags:   func(fs *cmdutil.FlagSet) { opts.addFlags(fs, "Remove every bundled skill.") },
		Run:     runUninstall,
	}
	if runF != nil {
		v.Run = runF
	}
	return cmdutil.NewVerb(f, opts, v)
}

func runUninstall(_ context.Context, opts *uninstallOptions) error {
	p, chosen, tools, err := opts.resolve(opts.Factory, opts.Format, defaultSkill)
	if err != nil {
		return err
	}
	ops, err := apply(p, chosen, tools, uninstall)
	if err != nil {
		return err
	}
	if done, err := printStructured(opts.Printer(), ops); done {
		return err
	}
	writeOperations(opts.IOStreams.Out, ops)
	return nil
}
