package skills

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type listOptions struct {
	cmdutil.Base
	// Getwd finds the project scope's directory; tests point it elsewhere.
	Getwd func() (string, error)
	Wide  bool
}

// newCmdList builds list; runF, when not nil, replaces runList (tests point
// the project scope elsewhere with it).
func newCmdList(f *cmdutil.Factory, runF func(context.Context, *listOptions) error) *cobra.Command {
	opts := &listOptions{Getwd: os.Getwd}
	v := cmdutil.Verb[listOptions]{
		Name:  "list",
		Short: "List bundled skills, supported tools, and what is installed where.",
		Long: "List the bundled skills and, for each coding tool, how many of them are\n" +
			"installed in this project and in your home directory, in one screen. --wide\n" +
			"adds each skill's trigger and every file, with its status; -o json and -o yaml\n" +
			"always hold everything.",
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.BoolVar(&opts.Wide, "wide", false, "Show each skill's trigger and every file with its status.")
		},
		Run: runList,
	}
	if runF != nil {
		v.Run = runF
	}
	return cmdutil.NewVerb(f, opts, v)
}

// targetState is one tool in one scope, with each skill's install status.
type targetState struct {
	Target string       `json:"target"`
	Scope  string       `json:"scope"`
	Label  string       `json:"label"`
	Layout string       `json:"layout"`
	Skills []skillState `json:"skills"`
}

type skillState struct {
	Skill  string `json:"skill"`
	Status string `json:"status"`
	Path   string `json:"path"`
}

func runList(_ context.Context, opts *listOptions) error {
	var states []targetState
	for _, scope := range scopes {
		p, err := locate(opts.Factory, opts.Getwd, scope)
		if err != nil {
			return err
		}
		for _, t := range targets {
			states = append(states, stateOf(p, t))
		}
	}
	// Listings go tool by tool, each with its project then global scope.
	ordered := make([]targetState, 0, len(states))
	for i := range targets {
		ordered = append(ordered, states[i], states[len(targets)+i])
	}
	printer := opts.Printer()
	if printer.Structured() {
		return printer.Data(struct {
			Skills  []skill       `json:"skills"`
			Targets []targetState `json:"targets"`
		}{builtinSkills, ordered})
	}
	if opts.Wide {
		return writeList(opts.IOStreams.Out, ordered)
	}
	width := 0 // piped: whole lines, never cut
	if opts.IOStreams.StdoutTTY() {
		width = opts.IOStreams.TerminalWidth()
	}
	return writeSummary(opts.IOStreams.Out, width, ordered)
}

func stateOf(p place, t target) targetState {
	st := targetState{Target: t.Name, Scope: p.Scope, Label: t.Label, Layout: p.layout(t)}
	for _, s := range builtinSkills {
		status := "not installed"
		if _, current, ok := p.found(t, s); ok {
			status = "installed"
			if !current {
				status = statusOldLayout
			}
		}
		st.Skills = append(st.Skills, skillState{Skill: s.Slug, Status: status, Path: p.show(p.rel(t, s))})
	}
	return st
}

func writeList(w io.Writer, states []targetState) error {
	fmt.Fprint(w, "Bundled skills:\n\n")
	for _, s := range builtinSkills {
		fmt.Fprintf(w, "  %-24s  [%s] %s\n", s.Slug, s.Area, s.Summary)
		fmt.Fprintf(w, "  %-24s  Trigger: %s\n", "", s.TriggerHint)
	}
	fmt.Fprint(w, "\nSupported targets:\n\n")
	for _, st := range states {
		fmt.Fprintf(w, "  %-10s  %-8s  %-18s  %s\n", st.Target, st.Scope, st.Label, st.Layout)
		for _, s := range st.Skills {
			fmt.Fprintf(w, "  %-10s  %-8s  %-18s  %-24s  %-13s  (%s)\n", "", "", "", s.Skill, s.Status, s.Path)
		}
	}
	return nil
}

// statusOldLayout is a skill an earlier osb installed where the tool no
// longer looks; `skills install` moves it.
const statusOldLayout = "old layout"

// writeSummary is the default listing: a line per skill, a line per tool
// with its installed counts per scope, cut to the terminal's width (0:
// not a terminal, nothing cut).
func writeSummary(w io.Writer, width int, states []targetState) error {
	fit := func(line string) string {
		if r := []rune(line); width > 0 && len(r) > width {
			return string(r[:width-1]) + "…"
		}
		return line
	}
	fmt.Fprint(w, "Bundled skills (osb skills show NAME):\n")
	for _, s := range builtinSkills {
		fmt.Fprintln(w, fit(fmt.Sprintf("  %-24s  %s", s.Slug, s.Summary)))
	}
	fmt.Fprintf(w, "\nTargets (skills installed of %d):\n", len(builtinSkills))
	fmt.Fprintln(w, fit(fmt.Sprintf("  %-8s  %-14s  %-7s  %-6s  %s", "TARGET", "TOOL", "PROJECT", "GLOBAL", "PROJECT FILES")))
	oldLayouts := false
	for i := 0; i+1 < len(states); i += 2 {
		project, global := states[i], states[i+1]
		t := selectTargets(project.Target)[0]
		pc, po := counts(project)
		gc, gol := counts(global)
		oldLayouts = oldLayouts || po+gol > 0
		fmt.Fprintln(w, fit(fmt.Sprintf("  %-8s  %-14s  %-7d  %-6d  %s", project.Target, project.Label,
			pc, gc, strings.ReplaceAll(t.Pattern, slugPlaceholder, "*"))))
	}
	if oldLayouts {
		fmt.Fprintln(w, "\nSome skills are in a layout the tool no longer reads:\nrun osb skills install again to move them.")
	}
	// Two lines, each within 80 columns: they are sentences, not cut.
	_, err := fmt.Fprintln(w, "\nosb skills list --wide shows every file;\nosb skills install --help says how to add them.")
	return err
}

// counts is how many skills are installed for st, and how many of those
// are in an old layout.
func counts(st targetState) (installed, old int) {
	for _, s := range st.Skills {
		switch s.Status {
		case "installed":
			installed++
		case statusOldLayout:
			installed++
			old++
		}
	}
	return installed, old
}
