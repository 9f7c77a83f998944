package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// target is a coding tool skills can be installed for. Both scopes use the
// same layout: relative to the working directory for project, to the home
// directory for global.
type target struct {
	Name  string
	Label string
	// Pattern is the installed file, relative to the scope's root; in copy
	// targets "<skill-name>" stands for the skill's slug.
	Pattern string
	// Shared targets keep every skill as a marked block in one file the
	// user may also edit; the others get one file per skill.
	Shared          bool
	KeepFrontMatter bool
}

const slugPlaceholder = "<skill-name>"

// targets is in the official order, which listings and `--target all` keep.
var targets = []target{
	{Name: "claude", Label: "Claude Code", Pattern: ".claude/skills/<skill-name>.md", KeepFrontMatter: true},
	{Name: "cursor", Label: "Cursor", Pattern: ".cursor/rules/<skill-name>.mdc"},
	{Name: "codex", Label: "Codex", Pattern: ".codex/skills/<skill-name>/SKILL.md", KeepFrontMatter: true},
	{Name: "copilot", Label: "GitHub Copilot", Pattern: ".github/copilot-instructions.md", Shared: true},
	{Name: "windsurf", Label: "Windsurf", Pattern: ".windsurfrules", Shared: true},
	{Name: "cline", Label: "Cline", Pattern: ".clinerules", Shared: true},
	{Name: "opencode", Label: "OpenCode", Pattern: ".agents/skills/<skill-name>/SKILL.md", KeepFrontMatter: true},
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

// relPath is where s goes for t, relative to the scope's root.
func (t target) relPath(s skill) string {
	return filepath.FromSlash(strings.ReplaceAll(t.Pattern, slugPlaceholder, s.Slug))
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
	return filepath.Join(p.Root, t.relPath(s))
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
	where := p.show(filepath.FromSlash(t.Pattern))
	if t.Shared {
		return "aggregate into one instructions file at " + where
	}
	return "install one file per skill under " + where
}
