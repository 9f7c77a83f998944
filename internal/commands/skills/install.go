package skills

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type installOptions struct {
	f *cmdutil.Factory
	selection
	Force bool
}

func newCmdInstall(f *cmdutil.Factory, runF func(*installOptions) error) *cobra.Command {
	opts := &installOptions{f: f, selection: selection{Getwd: os.Getwd}}
	cmd := &cobra.Command{
		Use:   "install [SKILL]",
		Short: "Install bundled skills for an AI coding tool.",
		Long: "Install one bundled skill, or all of them with --all-builtins, for one coding tool or all.\n\n" +
			"--scope project writes under the current directory, --scope global under your home\n" +
			"directory. Installing never prompts and is safe to repeat: each skill is reported as\n" +
			"installed, already_present or updated. Tools that share one instructions file\n" +
			"(copilot, windsurf, cline) get a marked block in it; the rest of the file is kept.",
		Example: "  osb skills install sandbox-lifecycle --target claude --scope project\n" +
			"  osb skills install --all-builtins --target all --scope global -o json",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Skill = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runInstall(opts)
		},
	}
	opts.addFlags(cmd, "Install every bundled skill.")
	cmd.Flags().BoolVarP(&opts.Force, "force", "f", false, "Accepted for compatibility; installs never prompt.")
	return cmd
}

func runInstall(opts *installOptions) error {
	p, chosen, tools, err := opts.resolve(opts.f, "")
	if err != nil {
		return err
	}
	ops, err := apply(p, chosen, tools, install)
	if err != nil {
		return err
	}
	if done, err := printStructured(opts.f, opts.Format, ops); done {
		return err
	}
	return writeInstallPlan(opts.f.IOStreams.Out, p, tools, ops)
}

func writeInstallPlan(w io.Writer, p place, tools []target, ops []operation) error {
	fmt.Fprint(w, "Install plan:\n\n")
	for _, t := range tools {
		fmt.Fprintf(w, "  %s [%s]: %s\n", t.Label, p.Scope, p.layout(t))
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
