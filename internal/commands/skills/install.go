package skills

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type installOptions struct {
	cmdutil.Base
	selection
	Force bool
}

// newCmdInstall builds install; runF, when not nil, replaces runInstall
// (tests point the project scope elsewhere with it).
func newCmdInstall(f *cmdutil.Factory, runF func(context.Context, *installOptions) error) *cobra.Command {
	opts := &installOptions{selection: selection{Getwd: os.Getwd}}
	v := cmdutil.Verb[installOptions]{
		Name:  "install",
		Short: "Install bundled skills for an AI coding tool.",
		Long: "Install one bundled skill, or all of them with --all-builtins, for one coding tool or all.\n\n" +
			"--scope project writes under the current directory, --scope global under your home\n" +
			"directory. Installing never prompts and is safe to repeat: each skill is reported as\n" +
			"installed, already_present, updated or upgraded.\n\n" +
			"Each tool gets the layout it reads: a directory per skill holding SKILL.md with\n" +
			"name and description front matter (claude, codex, copilot, windsurf, cline,\n" +
			"opencode), or a rule file with description front matter (cursor). Codex and\n" +
			"OpenCode both read .agents/skills, so one copy serves both. A skill an earlier osb\n" +
			"wrote in an older layout (.claude/skills/NAME.md, .codex/skills, a marked block in\n" +
			".github/copilot-instructions.md, .windsurfrules or .clinerules) is moved and\n" +
			"reported as upgraded; the rest of such a shared file is kept byte for byte.",
		Example: "  osb skills install sandbox-lifecycle --target claude --scope project\n" +
			"  osb skills install --all-builtins --target all --scope global -o json",
		Args:    []cmdutil.Arg{cmdutil.OptionalArg("SKILL", &opts.Skill)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			opts.addFlags(fs, "Install every bundled skill.")
			fs.BoolVarP(&opts.Force, "force", "f", false, "Accepted for compatibility; installs never prompt.")
		},
		Run: runInstall,
	}
	if runF != nil {
		v.Run = runF
	}
	return cmdutil.NewVerb(f, opts, v)
}

func runInstall(_ context.Context, opts *installOptions) error {
	p, chosen, tools, err := opts.resolve(opts.Factory, opts.Format, "")
	if err != nil {
		return err
	}
	ops, err := apply(p, chosen, tools, install)
	if err != nil {
		return err
	}
	if done, err := printStructured(opts.Printer(), ops); done {
		return err
	}
	return writeInstallPlan(opts.IOStreams.Out, p, tools, ops)
}

func writeInstallPlan(w io.Writer, p place, tools []target, ops []operation) error {
	fmt.Fprint(w, "Install plan:\n\n")
	for _, t := range tools {
		fmt.Fprintf(w, "  %s [%s]: %s\n", t.Label, p.Scope, p.layout(t))
		if t.Note != "" {
			fmt.Fprintf(w, "    (%s)\n", t.Note)
		}
	}
	fmt.Fprintln(w)
	changed := writeOperations(w, ops)
	fmt.Fprintln(w)
	msg := "Done. Everything was already in place."
	if changed {
		msg = "Done. Restart your AI coding tool so that it loads the changed skills."
	}
	_, err := fmt.Fprintln(w, msg)
	return err
}
