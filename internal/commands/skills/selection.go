package skills

import (
	"fmt"
	"io"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// selection is what install and uninstall act on: skills, tools, scope.
type selection struct {
	// Getwd finds the project scope's directory; tests point it elsewhere.
	Getwd       func() (string, error)
	Skill       string
	AllBuiltins bool
	Target      string
	Scope       string
}

// addFlags adds the flags install and uninstall share. --target and
// --scope have no default: the command explains them when they are missing.
func (sel *selection) addFlags(fs *cmdutil.FlagSet, allUsage string) {
	fs.BoolVar(&sel.AllBuiltins, "all-builtins", false, allUsage)
	fs.Enum(&sel.Target, "target", "t", "", append(targetNames(), allTargets),
		"Coding tool: claude, cursor, codex, copilot, windsurf, cline, opencode, or all.")
	fs.Enum(&sel.Scope, "scope", "", "", scopes,
		"Where: project (the current directory) or global (your home directory).")
}

// resolve checks the selection, in the order the official client does, and
// returns where to act and on what. defaultName stands in for a missing
// skill name when not empty.
func (sel *selection) resolve(f *cmdutil.Factory, format, defaultName string) (place, []skill, []target, error) {
	if sel.Skill != "" && sel.AllBuiltins {
		return place{}, nil, nil, ops.UsageErrorf("pass either a skill name or --all-builtins, not both")
	}
	if err := checkPlacement(f, format, sel.Target, sel.Scope); err != nil {
		return place{}, nil, nil, err
	}
	name := sel.Skill
	if name == "" {
		name = defaultName
	}
	chosen, err := chooseSkills(f, format, name, sel.AllBuiltins)
	if err != nil {
		return place{}, nil, nil, err
	}
	p, err := locate(f, sel.Getwd, sel.Scope)
	if err != nil {
		return place{}, nil, nil, err
	}
	return p, chosen, selectTargets(sel.Target), nil
}

// operation is the result for one skill and target.
type operation struct {
	Skill       string `json:"skill"`
	Target      string `json:"target"`
	TargetLabel string `json:"target_label"`
	Scope       string `json:"scope"`
	Path        string `json:"path"`
	Status      string `json:"status"`
	// RequiresRestart is always true: tools read skills when they start.
	RequiresRestart bool `json:"requires_restart"`
}

// apply runs act for every skill and tool, skill by skill, and stops at the
// first failure.
func apply(p place, chosen []skill, tools []target, act func(place, target, skill) (string, error)) ([]operation, error) {
	var ops []operation
	for _, s := range chosen {
		for _, t := range tools {
			status, err := act(p, t, s)
			if err != nil {
				return nil, err
			}
			ops = append(ops, operation{
				Skill: s.Slug, Target: t.Name, TargetLabel: t.Label, Scope: p.Scope,
				Path: p.show(p.rel(t, s)), Status: status, RequiresRestart: true,
			})
		}
	}
	return ops, nil
}

// printStructured prints ops under json or yaml and reports whether it did.
func printStructured(p *output.Printer, ops []operation) (bool, error) {
	if !p.Structured() {
		return false, nil
	}
	return true, p.Data(struct {
		Operations      []operation `json:"operations"`
		RequiresRestart bool        `json:"requires_restart"`
	}{ops, true})
}

// writeOperations prints one line per result and reports whether any of
// them changed a file.
func writeOperations(w io.Writer, ops []operation) bool {
	changed := false
	for _, op := range ops {
		fmt.Fprintf(w, "  %-15s %s [%s]: %s -> %s\n", op.Status, op.TargetLabel, op.Scope, op.Skill, op.Path)
		changed = changed || (op.Status != statusAlreadyPresent && op.Status != statusNotInstalled)
	}
	return changed
}
