package skills

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/umask"
	bundled "github.com/osb-dev/osb/skills"
)

func TestMain(m *testing.M) {
	// Directory modes below are checked exactly; a umask of 002 would make them 0775.
	umask.Set(0o022)
	os.Exit(m.Run())
}

// fixture is a home directory and a project directory, both empty.
type fixture struct {
	t       *testing.T
	home    string
	project string
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, home: t.TempDir(), project: t.TempDir()}
}

type result struct {
	stdout, stderr string
	code           int
}

// run executes one skills subcommand the way the root would, with the
// project scope in f.project and $HOME at f.home.
func (fx *fixture) run(args ...string) result {
	fx.t.Helper()
	ios, _, stdout, stderr := iostreams.Test()
	f := cmdutil.New(ios, func(k string) string {
		if k == "HOME" {
			return fx.home
		}
		return ""
	})
	getwd := func() (string, error) { return fx.project, nil }
	var cmd *cobra.Command
	switch args[0] {
	case "install":
		cmd = newCmdInstall(f, func(ctx context.Context, o *installOptions) error { o.Getwd = getwd; return runInstall(ctx, o) })
	case "uninstall":
		cmd = newCmdUninstall(f, func(ctx context.Context, o *uninstallOptions) error { o.Getwd = getwd; return runUninstall(ctx, o) })
	case "list":
		cmd = newCmdList(f, func(ctx context.Context, o *listOptions) error { o.Getwd = getwd; return runList(ctx, o) })
	default:
		fx.t.Fatalf("no such subcommand %q", args[0])
	}
	cmd.SetArgs(args[1:])
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	if err != nil {
		stderr.WriteString(err.Error())
	}
	return result{stdout.String(), stderr.String(), cmdutil.ExitCode(err)}
}

// ops runs an install or uninstall under -o json and returns its operations.
func (fx *fixture) ops(args ...string) []operation {
	fx.t.Helper()
	r := fx.run(append(args, "-o", "json")...)
	if r.code != 0 {
		fx.t.Fatalf("osb skills %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	var out struct {
		Operations      []operation `json:"operations"`
		RequiresRestart bool        `json:"requires_restart"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		fx.t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if !out.RequiresRestart {
		fx.t.Errorf("requires_restart is false")
	}
	return out.Operations
}

// root is the directory a scope writes under.
func (fx *fixture) root(scope string) string {
	if scope == scopeGlobal {
		return fx.home
	}
	return fx.project
}

// files lists every file and directory under dir, relative, with its mode.
func files(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	found := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		found[filepath.ToSlash(rel)] = info.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expectedContent is what a target should hold for a skill, worked out
// from the bundled file independently of render.
func expectedContent(t *testing.T, tool, slug, title, summary string) string {
	t.Helper()
	raw, err := bundled.FS.ReadFile("opensandbox-" + slug + ".md")
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	switch tool {
	case "claude", "codex", "opencode":
		return strings.TrimSpace(md) + "\n"
	}
	parts := strings.SplitN(md, "\n---\n", 2)
	if len(parts) != 2 || !strings.HasPrefix(md, "---\n") {
		t.Fatalf("%s has no front matter", slug)
	}
	return "# " + title + "\n\n" + summary + "\n\n" + strings.TrimSpace(parts[1]) + "\n"
}

// layouts is each target's file for the sandbox-lifecycle skill and the
// directories it needs, relative to the scope's root.
var layouts = map[string]struct {
	file string
	dirs []string
}{
	"claude":   {".claude/skills/sandbox-lifecycle.md", []string{".claude", ".claude/skills"}},
	"cursor":   {".cursor/rules/sandbox-lifecycle.mdc", []string{".cursor", ".cursor/rules"}},
	"codex":    {".codex/skills/sandbox-lifecycle/SKILL.md", []string{".codex", ".codex/skills", ".codex/skills/sandbox-lifecycle"}},
	"copilot":  {".github/copilot-instructions.md", []string{".github"}},
	"windsurf": {".windsurfrules", nil},
	"cline":    {".clinerules", nil},
	"opencode": {".agents/skills/sandbox-lifecycle/SKILL.md", []string{".agents", ".agents/skills", ".agents/skills/sandbox-lifecycle"}},
}

var sharedTools = map[string]bool{"copilot": true, "windsurf": true, "cline": true}

const (
	lifecycleTitle   = "OpenSandbox Sandbox Lifecycle"
	lifecycleSummary = "Create, inspect, renew, pause, resume and kill sandboxes with sensible defaults, checking the result of every step."
	userText         = "# House rules\n\nAlways run the tests.\r\nKeep answers short.  \n"
)

func TestInstallEveryTargetAndScope(t *testing.T) {
	for _, tool := range []string{"claude", "cursor", "codex", "copilot", "windsurf", "cline", "opencode"} {
		for _, scope := range []string{"project", "global"} {
			t.Run(tool+"/"+scope, func(t *testing.T) {
				testInstallCycle(t, tool, scope, false)
				if sharedTools[tool] {
					t.Run("with user text", func(t *testing.T) { testInstallCycle(t, tool, scope, true) })
				}
			})
		}
	}
}

// testInstallCycle installs, reinstalls and uninstalls sandbox-lifecycle for
// one target and scope, checking the files on disk at every step.
func testInstallCycle(t *testing.T, tool, scope string, withUserText bool) {
	fx := newFixture(t)
	root := fx.root(scope)
	layout := layouts[tool]
	path := filepath.Join(root, layout.file)
	shown := layout.file
	if scope == "global" {
		shown = path
	}
	before := ""
	if withUserText {
		before = userText
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	want := expectedContent(t, tool, "sandbox-lifecycle", lifecycleTitle, lifecycleSummary)
	if sharedTools[tool] {
		sep := ""
		if before != "" {
			sep = "\n"
		}
		want = before + sep + "<!-- BEGIN opensandbox-sandbox-lifecycle -->\n" + strings.TrimSpace(want) + "\n<!-- END opensandbox-sandbox-lifecycle -->\n"
	}

	wantOp := operation{Skill: "sandbox-lifecycle", Target: tool, TargetLabel: targetLabel(tool), Scope: scope,
		Path: shown, Status: "installed", RequiresRestart: true}
	checkOps(t, fx.ops("install", "sandbox-lifecycle", "--target", tool, "--scope", scope), wantOp)
	if got := readFile(t, path); got != want {
		t.Fatalf("%s after install:\n%s\nwant:\n%s", layout.file, got, want)
	}
	wantFiles := map[string]fs.FileMode{layout.file: 0o644}
	if withUserText {
		wantFiles[layout.file] = 0o600 // the user's file keeps its mode
	}
	for _, d := range layout.dirs {
		wantFiles[d] = fs.ModeDir | 0o755
	}
	checkFiles(t, root, wantFiles)

	wantOp.Status = "already_present"
	checkOps(t, fx.ops("install", "sandbox-lifecycle", "--target", tool, "--scope", scope, "--force"), wantOp)
	if got := readFile(t, path); got != want {
		t.Fatalf("%s changed on reinstall:\n%s", layout.file, got)
	}
	checkFiles(t, root, wantFiles)

	wantOp.Status = "removed"
	checkOps(t, fx.ops("uninstall", "sandbox-lifecycle", "--target", tool, "--scope", scope), wantOp)
	if withUserText {
		if got := readFile(t, path); got != userText {
			t.Fatalf("user text not kept byte for byte:\n%q\nwant:\n%q", got, userText)
		}
		checkFiles(t, root, map[string]fs.FileMode{layout.file: 0o600, filepath.ToSlash(filepath.Dir(layout.file)): fs.ModeDir | 0o755})
	} else {
		checkFiles(t, root, map[string]fs.FileMode{})
	}

	wantOp.Status = "not_installed"
	checkOps(t, fx.ops("uninstall", "sandbox-lifecycle", "--target", tool, "--scope", scope), wantOp)
}

func targetLabel(name string) string {
	return map[string]string{"claude": "Claude Code", "cursor": "Cursor", "codex": "Codex", "copilot": "GitHub Copilot",
		"windsurf": "Windsurf", "cline": "Cline", "opencode": "OpenCode"}[name]
}

func checkOps(t *testing.T, got []operation, want ...operation) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("operations:\n%+v\nwant:\n%+v", got, want)
	}
}

// checkFiles compares the whole tree under root with want; "." entries are
// ignored, so pass directory entries explicitly.
func checkFiles(t *testing.T, root string, want map[string]fs.FileMode) {
	t.Helper()
	got := files(t, root)
	delete(want, ".")
	for name, mode := range want {
		if got[name] != mode {
			t.Errorf("%s: mode %v, want %v (tree: %v)", name, got[name], mode, got)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected %s in %s", name, root)
		}
	}
}

func TestInstallAllBuiltinsIntoSharedFile(t *testing.T) {
	fx := newFixture(t)
	path := filepath.Join(fx.project, ".clinerules")
	if err := os.WriteFile(path, []byte(userText), 0o644); err != nil {
		t.Fatal(err)
	}
	ops := fx.ops("install", "--all-builtins", "--target", "cline", "--scope", "project")
	if len(ops) != len(builtinSkills) {
		t.Fatalf("%d operations, want %d", len(ops), len(builtinSkills))
	}
	for i, op := range ops {
		if op.Skill != builtinSkills[i].Slug || op.Status != "installed" || op.Path != ".clinerules" {
			t.Errorf("operation %d: %+v", i, op)
		}
	}
	text := readFile(t, path)
	if !strings.HasPrefix(text, userText+"\n<!-- BEGIN opensandbox-sandbox-troubleshooting -->\n") {
		t.Errorf("the user's text does not come first, followed by a blank line:\n%.200s", text)
	}
	for _, s := range builtinSkills {
		if n := strings.Count(text, "<!-- BEGIN "+s.MarkerID+" -->\n"); n != 1 {
			t.Errorf("%d BEGIN markers for %s", n, s.Slug)
		}
	}

	// Installing again changes nothing; so does a second install of one skill.
	for _, op := range fx.ops("install", "--all-builtins", "--target", "cline", "--scope", "project") {
		if op.Status != "already_present" {
			t.Errorf("reinstall: %+v", op)
		}
	}
	if readFile(t, path) != text {
		t.Fatal("reinstall changed the file")
	}

	// Removing one skill from the middle leaves the others and the user's text.
	fx.ops("uninstall", "file-operations", "--target", "cline", "--scope", "project")
	rest := readFile(t, path)
	s, _ := lookupSkill("file-operations")
	if strings.Contains(rest, s.beginMarker()) || strings.Contains(rest, "# OpenSandbox File Operations") {
		t.Error("file-operations block still present")
	}
	for _, other := range builtinSkills {
		if other.Slug != s.Slug && !installed(place{Scope: scopeProject, Root: fx.project}, selectTargets("cline")[0], other) {
			t.Errorf("%s lost", other.Slug)
		}
	}

	// Removing the rest restores the user's file exactly.
	for _, op := range fx.ops("uninstall", "--all-builtins", "--target", "cline", "--scope", "project") {
		want := "removed"
		if op.Skill == "file-operations" {
			want = "not_installed"
		}
		if op.Status != want {
			t.Errorf("uninstall: %+v, want %s", op, want)
		}
	}
	if got := readFile(t, path); got != userText {
		t.Fatalf("user text not restored:\n%q", got)
	}
}

func TestInstallUpdatesChangedFiles(t *testing.T) {
	fx := newFixture(t)
	fx.ops("install", "command-execution", "--target", "all", "--scope", "global")
	claude := filepath.Join(fx.home, ".claude/skills/command-execution.md")
	windsurf := filepath.Join(fx.home, ".windsurfrules")
	good := map[string]string{claude: readFile(t, claude), windsurf: readFile(t, windsurf)}
	if err := os.WriteFile(claude, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A user's edit inside the block, and text of theirs after it.
	edited := strings.Replace(good[windsurf], "## When To Use", "## When To Use (edited)", 1) + "\nmy own line\n"
	if err := os.WriteFile(windsurf, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, op := range fx.ops("install", "command-execution", "--target", "all", "--scope", "global") {
		want := "already_present"
		if op.Target == "claude" || op.Target == "windsurf" {
			want = "updated"
		}
		if op.Status != want {
			t.Errorf("%s: status %s, want %s", op.Target, op.Status, want)
		}
	}
	if got := readFile(t, claude); got != good[claude] {
		t.Error("claude file not rewritten")
	}
	if got, want := readFile(t, windsurf), good[windsurf]+"\nmy own line\n"; got != want {
		t.Errorf("windsurf block not replaced in place:\n%q\nwant:\n%q", got, want)
	}
	fx.ops("uninstall", "command-execution", "--target", "windsurf", "--scope", "global")
	if got := readFile(t, windsurf); got != "my own line\n" {
		t.Errorf("after uninstall: %q", got)
	}
}

func TestInstallKeepsOtherFilesAndDirectories(t *testing.T) {
	fx := newFixture(t)
	mine := filepath.Join(fx.project, ".claude/skills/my-skill.md")
	if err := os.MkdirAll(filepath.Dir(mine), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.ops("install", "--all-builtins", "--target", "claude", "--scope", "project")
	fx.ops("uninstall", "--all-builtins", "--target", "claude", "--scope", "project")
	checkFiles(t, fx.project, map[string]fs.FileMode{
		".claude": fs.ModeDir | 0o700, ".claude/skills": fs.ModeDir | 0o700, ".claude/skills/my-skill.md": 0o600,
	})
}

func TestInstallFollowsSymlinkedSharedFile(t *testing.T) {
	fx := newFixture(t)
	real := filepath.Join(t.TempDir(), "rules.md")
	if err := os.WriteFile(real, []byte(userText), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(fx.project, ".windsurfrules")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	fx.ops("install", "network-egress", "--target", "windsurf", "--scope", "project")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if !strings.Contains(readFile(t, real), "<!-- BEGIN opensandbox-network-egress -->") {
		t.Fatal("the linked file was not updated")
	}
	fx.ops("uninstall", "network-egress", "--target", "windsurf", "--scope", "project")
	if got := readFile(t, real); got != userText {
		t.Fatalf("linked file after uninstall: %q", got)
	}
}

func TestInstallRefusesUnmatchedMarker(t *testing.T) {
	fx := newFixture(t)
	path := filepath.Join(fx.project, ".clinerules")
	broken := "intro\n<!-- BEGIN opensandbox-sandbox-troubleshooting -->\nhalf a block\n"
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"install", "uninstall"} {
		r := fx.run(verb, "sandbox-troubleshooting", "--target", "cline", "--scope", "project")
		if r.code != 1 || !strings.Contains(r.stderr, "has no matching") || !strings.Contains(r.stderr, path) {
			t.Errorf("%s: exit %d, stderr %q", verb, r.code, r.stderr)
		}
		if got := readFile(t, path); got != broken {
			t.Errorf("%s changed the file: %q", verb, got)
		}
	}
}

func TestInstallTable(t *testing.T) {
	fx := newFixture(t)
	r := fx.run("install", "credential-vault", "--target", "copilot", "--scope", "project")
	want := "Install plan:\n\n" +
		"  GitHub Copilot [project]: aggregate into one instructions file at .github/copilot-instructions.md\n\n" +
		"  installed       GitHub Copilot [project]: credential-vault -> .github/copilot-instructions.md\n\n" +
		"Done. Restart your AI coding tool so that it loads the changed skills.\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	r = fx.run("install", "CREDENTIAL-VAULT", "-t", "Copilot", "--scope", "PROJECT")
	if !strings.Contains(r.stdout, "  already_present GitHub Copilot [project]: credential-vault -> .github/copilot-instructions.md\n\nDone. Everything was already in place.\n") {
		t.Fatalf("reinstall, names in other case:\n%s%s", r.stdout, r.stderr)
	}
	r = fx.run("uninstall", "credential-vault", "--target", "copilot", "--scope", "project")
	if want := "  removed         GitHub Copilot [project]: credential-vault -> .github/copilot-instructions.md\n"; r.stdout != want {
		t.Fatalf("uninstall:\n%s\nwant:\n%s", r.stdout, want)
	}
}

func TestUninstallDefaultsToTroubleshooting(t *testing.T) {
	fx := newFixture(t)
	fx.ops("install", "--all-builtins", "--target", "codex", "--scope", "global")
	ops := fx.ops("uninstall", "--target", "codex", "--scope", "global")
	want := operation{Skill: "sandbox-troubleshooting", Target: "codex", TargetLabel: "Codex", Scope: "global",
		Path: filepath.Join(fx.home, ".codex/skills/sandbox-troubleshooting/SKILL.md"), Status: "removed", RequiresRestart: true}
	checkOps(t, ops, want)
	if _, err := os.Stat(filepath.Join(fx.home, ".codex/skills/sandbox-troubleshooting")); !os.IsNotExist(err) {
		t.Errorf("the skill's directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fx.home, ".codex/skills/sandbox-lifecycle/SKILL.md")); err != nil {
		t.Errorf("another skill went too: %v", err)
	}
}

func TestListShowsInstalledState(t *testing.T) {
	fx := newFixture(t)
	fx.ops("install", "sandbox-lifecycle", "--target", "cursor", "--scope", "project")
	fx.ops("install", "file-operations", "--target", "copilot", "--scope", "global")
	// A shared file with no marked block counts as not installed.
	if err := os.WriteFile(filepath.Join(fx.project, ".windsurfrules"), []byte("mentions opensandbox-sandbox-lifecycle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fx.run("list", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		Targets []targetState `json:"targets"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	var installedAt []string
	for _, st := range out.Targets {
		for _, s := range st.Skills {
			if s.Status == "installed" {
				installedAt = append(installedAt, st.Target+"/"+st.Scope+"/"+s.Skill+"@"+s.Path)
			} else if s.Status != "not installed" {
				t.Errorf("status %q", s.Status)
			}
		}
	}
	want := []string{
		"cursor/project/sandbox-lifecycle@.cursor/rules/sandbox-lifecycle.mdc",
		"copilot/global/file-operations@" + filepath.Join(fx.home, ".github/copilot-instructions.md"),
	}
	if !slices.Equal(installedAt, want) {
		t.Errorf("installed: %v\nwant: %v", installedAt, want)
	}
}

func TestEveryBundledSkillIsRegistered(t *testing.T) {
	entries, err := bundled.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var embedded, registered []string
	for _, e := range entries {
		embedded = append(embedded, e.Name())
	}
	for _, s := range builtinSkills {
		registered = append(registered, s.PackageFile)
	}
	slices.Sort(registered)
	if !slices.Equal(embedded, registered) {
		t.Errorf("embedded %v, registered %v", embedded, registered)
	}
}

func TestSection(t *testing.T) {
	body := "intro\n## When To Use\n\nfirst\n### Detail\nsub\n## Next\nafter\n### Detail\nsecond\n"
	for heading, want := range map[string]string{
		"When To Use": "first\n### Detail\nsub",
		"Detail":      "sub",
		"Next":        "after\n### Detail\nsecond",
		"Missing":     "",
	} {
		if got := section(body, heading); got != want {
			t.Errorf("section(%q) = %q, want %q", heading, got, want)
		}
	}
	if got := section("## Empty\n\n## Full\nx\n", "Empty"); got != "" {
		t.Errorf("empty section = %q", got)
	}
}
