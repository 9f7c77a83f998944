package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// target is a coding tool skills can be installed for, in the layout that
// tool reads today. Paths are relative to the working directory for the
// project scope, to the home directory for global.
type target struct {
	Name  string
	Label string
	// Pattern is the installed file, relative to the scope's root; in
	// per-skill targets "<skill-name>" stands for the skill's slug.
	// GlobalPattern, when set, is the global scope's (a tool whose user
	// folder is not the project folder under home).
	Pattern       string
	GlobalPattern string
	// Form is how a skill's text is written for the tool.
	Form form
	// Shared targets keep every skill as a marked block in one file the
	// user may also edit; the others get one file per skill.
	Shared bool
	// Legacy are the layouts earlier osb versions wrote for this tool:
	// install moves a skill found there to Pattern, uninstall removes it.
	Legacy []target
	// Note is what the user must know to have the tool load the skills.
	Note string
}

// form is how a skill is written for a tool.
type form int

const (
	// formSkill is an Agent Skills SKILL.md: the bundled file as it is,
	// front matter (name, description) included.
	formSkill form = iota
	// formRule is a Cursor rule: description and alwaysApply front matter,
	// so the agent pulls the rule in when the description fits the task.
	formRule
	// formPlain is a heading and the summary instead of front matter, for
	// files a tool reads as plain instructions.
	formPlain
)

const slugPlaceholder = "<skill-name>"

// targets is in the official order, which listings and `--target all` keep.
// docs/decisions/skill-layouts.md says where each layout comes from.
var targets = []target{
	{Name: "claude", Label: "Claude Code", Pattern: ".claude/skills/<skill-name>/SKILL.md",
		Legacy: []target{{Pattern: ".claude/skills/<skill-name>.md"}}},
	{Name: "cursor", Label: "Cursor", Pattern: ".cursor/rules/<skill-name>.mdc", Form: formRule},
	{Name: "codex", Label: "Codex", Pattern: ".agents/skills/<skill-name>/SKILL.md",
		Legacy: []target{{Pattern: ".codex/skills/<skill-name>/SKILL.md"}}},
	{Name: "copilot", Label: "GitHub Copilot", Pattern: ".github/skills/<skill-name>/SKILL.md",
		GlobalPattern: ".copilot/skills/<skill-name>/SKILL.md",
		Legacy:        []target{{Pattern: ".github/copilot-instructions.md", Shared: true, Form: formPlain}}},
	{Name: "windsurf", Label: "Windsurf", Pattern: ".windsurf/skills/<skill-name>/SKILL.md",
		GlobalPattern: ".codeium/windsurf/skills/<skill-name>/SKILL.md",
		Legacy:        []target{{Pattern: ".windsurfrules", Shared: true, Form: formPlain}}},
	{Name: "cline", Label: "Cline", Pattern: ".cline/skills/<skill-name>/SKILL.md",
		Legacy: []target{{Pattern: ".clinerules", Shared: true, Form: formPlain}},
		Note:   "Cline loads skills once Settings > Features > Enable Skills is on"},
	{Name: "opencode", Label: "OpenCode", Pattern: ".agents/skills/<skill-name>/SKILL.md"},
}

// pattern is the layout of t in scope.
func (t target) pattern(scope string) string {
	if scope == scopeGlobal && t.GlobalPattern != "" {
		return t.GlobalPattern
	}
	return t.Pattern
}

const (
	scopeProject = "project"
	scopeGlobal  = "global"
	allTargets   = "all"
)

var scopes = []string{scopeProject, scopeGlobal}

// TargetNames lists the coding tools skills can be installed for, in order.
func TargetNames() []string { return targetNames() }

func targetNames() []string {
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Name
	}
	return names
}

// selectTargets returns the target named name, or every target for "all".
func selectTargets(name string) []target {
	if name == allTargets {
		return targets
	}
	for _, t := range targets {
		if t.Name == name {
			return []target{t}
		}
	}
	return nil
}

// rel is where s goes for t in this place, relative to its root.
func (p place) rel(t target, s skill) string {
	return filepath.FromSlash(strings.ReplaceAll(t.pattern(p.Scope), slugPlaceholder, s.Slug))
}

// place is a scope resolved on this machine.
type place struct {
	Scope string
	// Root is the directory the scope's paths start from.
	Root string
	// ShowAbsolute says whether paths are shown with Root in front: global
	// paths are, project paths are shown relative, as the user typed them.
	ShowAbsolute bool
}

// locate resolves scope: project is the working directory, global the home
// directory from $HOME.
func locate(f *cmdutil.Factory, getwd func() (string, error), scope string) (place, error) {
	if scope == scopeProject {
		dir, err := getwd()
		if err != nil {
			return place{}, fmt.Errorf("cannot find the working directory: %w", err)
		}
		return place{Scope: scope, Root: filepath.Clean(dir)}, nil
	}
	home := f.Getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return place{}, fmt.Errorf("cannot find the home directory for --scope global: %w", err)
		}
	}
	return place{Scope: scope, Root: filepath.Clean(home), ShowAbsolute: true}, nil
}

// file is where s goes for t in this place.
func (p place) file(t target, s skill) string {
	return filepath.Join(p.Root, p.rel(t, s))
}

// show is the path as osb prints it.
func (p place) show(rel string) string {
	if p.ShowAbsolute {
		return filepath.Join(p.Root, rel)
	}
	return rel
}

// layout describes how t stores skills in this place, for plans and listings.
func (p place) layout(t target) string {
	where := p.show(filepath.FromSlash(t.pattern(p.Scope)))
	if t.Shared {
		return "aggregate into one instructions file at " + where
	}
	return "install one file per skill under " + where
}

// found is where s is installed for t in this place: the current layout,
// else the first earlier one that holds it; ok is false when neither does.
func (p place) found(t target, s skill) (at target, current, ok bool) {
	if installed(p, t, s) {
		return t, true, true
	}
	for _, l := range t.Legacy {
		if installed(p, l, s) {
			return l, false, true
		}
	}
	return target{}, false, false
}
