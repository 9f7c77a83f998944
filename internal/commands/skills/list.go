package skills

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type listOptions struct {
	cmdutil.Base
	// Getwd finds the project scope's directory; tests point it elsewhere.
	Getwd func() (string, error)
}

// newCmdList builds list; runF, when not nil, replaces runList (tests point
// the project scope elsewhere with it).
func newCmdList(f *cmdutil.Factory, runF func(context.Context, *listOptions) error) *cobra.Command {
	opts := &listOptions{Getwd: os.Getwd}
	v := cmdutil.Verb[listOptions]{
		Name:    "list",
		Short:   "List bundled skills, supported tools, and what is installed where.",
		Formats: cmdutil.TableFormats,
		Run:     runList,
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
	return writeList(opts.IOStreams.Out, ordered)
}

func stateOf(p place, t target) targetState {
	st := targetState{Target: t.Name, Scope: p.Scope, Label: t.Label, Layout: p.layout(t)}
	for _, s := range builtinSkills {
		status := "not installed"
		if installed(p, t, s) {
			status = "installed"
		}
		st.Skills = append(st.Skills, skillState{Skill: s.Slug, Status: status, Path: p.show(t.relPath(s))})
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
