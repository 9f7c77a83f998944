package skills

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/ops"
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
	return result{stdout.String(), stderr.String(), ops.ExitCode(err)}
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
func expectedContent(t *testing.T, tool, slug, title string) string {
	t.Helper()
	raw, err := bundled.FS.ReadFile("opensandbox-" + slug + ".md")
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	if tool != "cursor" {
		return strings.TrimSpace(md) + "\n"
	}
	parts := strings.SplitN(md, "\n---\n", 2)
	if len(parts) != 2 || !strings.HasPrefix(md, "---\n") {
		t.Fatalf("%s has no front matter", slug)
	}
	desc := ""
	for _, line := range strings.Split(parts[0], "\n") {
		if v, ok := strings.CutPrefix(line, "description: "); ok {
			desc = v
		}
	}
	return "---\ndescription: " + desc + "\nalwaysApply: false\n---\n\n# " + title + "\n\n" + strings.TrimSpace(parts[1]) + "\n"
}

// layouts is each target's file for the sandbox-lifecycle skill and the
// directories it needs, relative to the scope's root, as each tool's own
// documentation says it reads them.
var layouts = map[string]map[string]struct {
	file string
	dirs []string
}{
	"project": {
		"claude":   {".claude/skills/sandbox-lifecycle/SKILL.md", []string{".claude", ".claude/skills", ".claude/skills/sandbox-lifecycle"}},
		"cursor":   {".cursor/rules/sandbox-lifecycle.mdc", []string{".cursor", ".cursor/rules"}},
		"codex":    {".agents/skills/sandbox-lifecycle/SKILL.md", []string{".agents", ".agents/skills", ".agents/skills/sandbox-lifecycle"}},
		"copilot":  {".github/skills/sandbox-lifecycle/SKILL.md", []string{".github", ".github/skills", ".github/skills/sandbox-lifecycle"}},
		"windsurf": {".windsurf/skills/sandbox-lifecycle/SKILL.md", []string{".windsurf", ".windsurf/skills", ".windsurf/skills/sandbox-lifecycle"}},
		"cline":    {".cline/skills/sandbox-lifecycle/SKILL.md", []string{".cline", ".cline/skills", ".cline/skills/sandbox-lifecycle"}},
		"opencode": {".agents/skills/sandbox-lifecycle/SKILL.md", []string{".agents", ".agents/skills", ".agents/skills/sandbox-lifecycle"}},
	},
	"global": {
		"claude":   {".claude/skills/sandbox-lifecycle/SKILL.md", []string{".claude", ".claude/skills", ".claude/skills/sandbox-lifecycle"}},
		"cursor":   {".cursor/rules/sandbox-lifecycle.mdc", []string{".cursor", ".cursor/rules"}},
		"codex":    {".agents/skills/sandbox-lifecycle/SKILL.md", []string{".agents", ".agents/skills", ".agents/skills/sandbox-lifecycle"}},
		"copilot":  {".copilot/skills/sandbox-lifecycle/SKILL.md", []string{".copilot", ".copilot/skills", ".copilot/skills/sandbox-lifecycle"}},
		"windsurf": {".codeium/windsurf/skills/sandbox-lifecycle/SKILL.md", []string{".codeium", ".codeium/windsurf", ".codeium/windsurf/skills", ".codeium/windsurf/skills/sandbox-lifecycle"}},
		"cline":    {".cline/skills/sandbox-lifecycle/SKILL.md", []string{".cline", ".cline/skills", ".cline/skills/sandbox-lifecycle"}},
		"opencode": {".agents/skills/sandbox-lifecycle/SKILL.md", []string{".agents", ".agents/skills", ".agents/skills/sandbox-lifecycle"}},
	},
}

const (
	lifecycleTitle = "OpenSandbox Sandbox Lifecycle"
	userText       = "# House rules\n\nAlways run the tests.\r\nKeep answers short.  \n"
)

// A test per target and scope: the file lands where the tool reads it,
// with the text it expects, and goes again without leaving directories.
func TestInstallEveryTargetAndScope(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"claude", "cursor", "codex", "copilot", "windsurf", "cline", "opencode"} {
		for _, scope := range []string{"project", "global"} {
			t.Run(tool+"/"+scope, func(t *testing.T) { testInstallCycle(t, tool, scope) })
		}
	}
}

// testInstallCycle installs, reinstalls and uninstalls sandbox-lifecycle for
// one target and scope, checking the files on disk at every step.
func testInstallCycle(t *testing.T, tool, scope string) {
	fx := newFixture(t)
	root := fx.root(scope)
	layout := layouts[scope][tool]
	path := filepath.Join(root, layout.file)
	shown := layout.file
	if scope == "global" {
		shown = path
	}
	want := expectedContent(t, tool, "sandbox-lifecycle", lifecycleTitle)
	wantOp := operation{Skill: "sandbox-lifecycle", Target: tool, TargetLabel: targetLabel(tool), Scope: scope,
		Path: shown, Status: "installed", RequiresRestart: true}
	checkOps(t, fx.ops("install", "sandbox-lifecycle", "--target", tool, "--scope", scope), wantOp)
	if got := readFile(t, path); got != want {
		t.Fatalf("%s after install:\n%s\nwant:\n%s", layout.file, got, want)
	}
	wantFiles := map[string]fs.FileMode{layout.file: 0o644}
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
	checkFiles(t, root, map[string]fs.FileMode{})

	wantOp.Status = "not_installed"
	checkOps(t, fx.ops("uninstall", "sandbox-lifecycle", "--target", tool, "--scope", scope), wantOp)
}

// Every file is one its tool loads: a SKILL.md sits in a directory named as
// its front matter's name (lower case and hyphens, as Agent Skills require)
// and has a description; a Cursor rule has a description and is not
// always applied.
func TestInstalledFilesAreWhatEachToolLoads(t *testing.T) {
	t.Parallel()
	nameRE := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for _, tool := range targetNames() {
		t.Run(tool, func(t *testing.T) {
			fx := newFixture(t)
			fx.ops("install", "--all-builtins", "--target", tool, "--scope", "project")
			for _, s := range builtinSkills {
				text := readFile(t, filepath.Join(fx.project, layoutFor(tool, "project", s.Slug)))
				front, _, ok := splitFrontMatter(text)
				if !ok {
					t.Fatalf("%s: no front matter", s.Slug)
				}
				desc := frontMatterValue(front, "description")
				if len(desc) < 20 || len(desc) > 1024 {
					t.Errorf("%s: description %q", s.Slug, desc)
				}
				if tool == "cursor" {
					if frontMatterValue(front, "alwaysApply") != "false" {
						t.Errorf("%s: front matter %q lacks alwaysApply: false", s.Slug, front)
					}
					continue
				}
				if name := frontMatterValue(front, "name"); name != s.Slug || !nameRE.MatchString(name) {
					t.Errorf("%s: name %q in a directory named %s", s.Slug, name, s.Slug)
				}
			}
		})
	}
}

// layoutFor is where a skill lands, from the table above.
func layoutFor(tool, scope, slug string) string {
	return strings.ReplaceAll(layouts[scope][tool].file, "sandbox-lifecycle", slug)
}

// oldLayouts are what earlier versions of osb wrote, per target.
var oldLayouts = map[string]string{
	"claude": ".claude/skills/sandbox-lifecycle.md", "codex": ".codex/skills/sandbox-lifecycle/SKILL.md",
	"copilot": ".github/copilot-instructions.md", "windsurf": ".windsurfrules", "cline": ".clinerules",
}

// A skill in an old layout is listed as such and moved by install: the old
// file goes, or only its block when the file is shared, keeping the user's
// text byte for byte.
func TestInstallUpgradesOldLayouts(t *testing.T) {
	t.Parallel()
	s, _ := lookupSkill("sandbox-lifecycle")
	for tool, old := range oldLayouts {
		for _, scope := range scopes {
			t.Run(tool+"/"+scope, func(t *testing.T) {
				fx := newFixture(t)
				root := fx.root(scope)
				tg := selectTargets(tool)[0]
				p := place{Scope: scope, Root: root}
				shared := tg.Legacy[0].Shared
				if shared {
					os.MkdirAll(filepath.Dir(filepath.Join(root, old)), 0o755)
					if err := os.WriteFile(filepath.Join(root, old), []byte(userText), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := write(p, tg.Legacy[0], s); err != nil {
					t.Fatal(err)
				}
				if got := listedStatus(t, fx, tool, scope, "sandbox-lifecycle"); got != "old layout" {
					t.Errorf("listed as %q before the upgrade", got)
				}
				ops := fx.ops("install", "sandbox-lifecycle", "--target", tool, "--scope", scope)
				if len(ops) != 1 || ops[0].Status != "upgraded" {
					t.Fatalf("install: %+v", ops)
				}
				if got := readFile(t, filepath.Join(root, layouts[scope][tool].file)); got != expectedContent(t, tool, s.Slug, s.Title) {
					t.Errorf("new file:\n%s", got)
				}
				if shared {
					if got := readFile(t, filepath.Join(root, old)); got != userText {
						t.Errorf("shared file after the upgrade: %q, want the user's text alone", got)
					}
				} else if _, err := os.Stat(filepath.Join(root, old)); !os.IsNotExist(err) {
					t.Errorf("old file still there: %v", err)
				}
				if got := listedStatus(t, fx, tool, scope, "sandbox-lifecycle"); got != "installed" {
					t.Errorf("listed as %q after the upgrade", got)
				}
				// Uninstall removes an old copy too.
				if _, err := write(p, tg.Legacy[0], s); err != nil {
					t.Fatal(err)
				}
				if ops := fx.ops("uninstall", "sandbox-lifecycle", "--target", tool, "--scope", scope); ops[0].Status != "removed" {
					t.Errorf("uninstall: %+v", ops)
				}
				want := map[string]fs.FileMode{}
				if shared {
					want[old] = 0o600
					if dir := filepath.Dir(old); dir != "." {
						want[dir] = fs.ModeDir | 0o755
					}
				}
				checkFiles(t, root, want)
			})
		}
	}
}

// listedStatus is what `skills list -o json` says of one skill.
func listedStatus(t *testing.T, fx *fixture, tool, scope, slug string) string {
	t.Helper()
	var out struct {
		Targets []targetState `json:"targets"`
	}
	if err := json.Unmarshal([]byte(fx.run("list", "-o", "json").stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, st := range out.Targets {
		for _, sk := range st.Skills {
			if st.Target == tool && st.Scope == scope && sk.Skill == slug {
				return sk.Status
			}
		}
	}
	return ""
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

// Every skill an earlier osb put in a shared file moves out in one install,
// and the file is left as the user wrote it.
func TestUpgradeAllBuiltinsOutOfSharedFile(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	path := filepath.Join(fx.project, ".clinerules")
	if err := os.WriteFile(path, []byte(userText), 0o644); err != nil {
		t.Fatal(err)
	}
	p := place{Scope: scopeProject, Root: fx.project}
	old := selectTargets("cline")[0].Legacy[0]
	for _, s := range builtinSkills {
		if _, err := write(p, old, s); err != nil {
			t.Fatal(err)
		}
	}
	ops := fx.ops("install", "--all-builtins", "--target", "cline", "--scope", "project")
	for i, op := range ops {
		if op.Skill != builtinSkills[i].Slug || op.Status != "upgraded" || op.Path != layoutFor("cline", "project", op.Skill) {
			t.Errorf("operation %d: %+v", i, op)
		}
	}
	if got := readFile(t, path); got != userText {
		t.Fatalf("user text not restored:\n%q", got)
	}
	for _, op := range fx.ops("install", "--all-builtins", "--target", "cline", "--scope", "project") {
		if op.Status != "already_present" {
			t.Errorf("reinstall: %+v", op)
		}
	}
}

func TestInstallUpdatesChangedFiles(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.ops("install", "command-execution", "--target", "all", "--scope", "global")
	claude := filepath.Join(fx.home, ".claude/skills/command-execution/SKILL.md")
	cursor := filepath.Join(fx.home, ".cursor/rules/command-execution.mdc")
	good := map[string]string{claude: readFile(t, claude), cursor: readFile(t, cursor)}
	for path := range good {
		if err := os.WriteFile(path, []byte("edited\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range fx.ops("install", "command-execution", "--target", "all", "--scope", "global") {
		want := "already_present"
		if op.Target == "claude" || op.Target == "cursor" {
			want = "updated"
		}
		if op.Status != want {
			t.Errorf("%s: status %s, want %s", op.Target, op.Status, want)
		}
	}
	for path, want := range good {
		if got := readFile(t, path); got != want {
			t.Errorf("%s not rewritten", path)
		}
	}
}

func TestInstallKeepsOtherFilesAndDirectories(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	mine := filepath.Join(fx.project, ".claude/skills/my-skill/SKILL.md")
	if err := os.MkdirAll(filepath.Dir(mine), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.ops("install", "--all-builtins", "--target", "claude", "--scope", "project")
	fx.ops("uninstall", "--all-builtins", "--target", "claude", "--scope", "project")
	checkFiles(t, fx.project, map[string]fs.FileMode{
		".claude": fs.ModeDir | 0o700, ".claude/skills": fs.ModeDir | 0o700, ".claude/skills/my-skill": fs.ModeDir | 0o700,
		".claude/skills/my-skill/SKILL.md": 0o600,
	})
}

func TestUpgradeFollowsSymlinkedSharedFile(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	real := filepath.Join(t.TempDir(), "rules.md")
	if err := os.WriteFile(real, []byte(userText), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(fx.project, ".windsurfrules")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s, _ := lookupSkill("network-egress")
	if _, err := write(place{Scope: scopeProject, Root: fx.project}, selectTargets("windsurf")[0].Legacy[0], s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, real), "<!-- BEGIN opensandbox-network-egress -->") {
		t.Fatal("the linked file was not written")
	}
	fx.ops("install", "network-egress", "--target", "windsurf", "--scope", "project")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if got := readFile(t, real); got != userText {
		t.Fatalf("linked file after the upgrade: %q", got)
	}
}

// A directory where an old shared file was (Cline's rules directory) is the
// user's: install and uninstall leave it alone.
func TestOldSharedPathNowADirectory(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	rule := filepath.Join(fx.project, ".clinerules", "style.md")
	if err := os.MkdirAll(filepath.Dir(rule), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rule, []byte(userText), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"install", "uninstall"} {
		if r := fx.run(verb, "sandbox-troubleshooting", "--target", "cline", "--scope", "project"); r.code != 0 {
			t.Fatalf("%s: exit %d: %s", verb, r.code, r.stderr)
		}
	}
	checkFiles(t, fx.project, map[string]fs.FileMode{".clinerules": fs.ModeDir | 0o755, ".clinerules/style.md": 0o644})
}

func TestInstallRefusesUnmatchedMarker(t *testing.T) {
	t.Parallel()
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
		if _, err := os.Stat(filepath.Join(fx.project, ".cline")); !os.IsNotExist(err) {
			t.Errorf("%s wrote the new layout before refusing: %v", verb, err)
		}
		if got := readFile(t, path); got != broken {
			t.Errorf("%s changed the file: %q", verb, got)
		}
	}
}

func TestInstallTable(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	r := fx.run("install", "credential-vault", "--target", "cline", "--scope", "project")
	want := "Install plan:\n\n" +
		"  Cline [project]: install one file per skill under .cline/skills/<skill-name>/SKILL.md\n" +
		"    (Cline loads skills once Settings > Features > Enable Skills is on)\n\n" +
		"  installed       Cline [project]: credential-vault -> .cline/skills/credential-vault/SKILL.md\n\n" +
		"Done. Restart your AI coding tool so that it loads the changed skills.\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	r = fx.run("install", "CREDENTIAL-VAULT", "-t", "Cline", "--scope", "PROJECT")
	if !strings.Contains(r.stdout, "  already_present Cline [project]: credential-vault -> .cline/skills/credential-vault/SKILL.md\n\nDone. Everything was already in place.\n") {
		t.Fatalf("reinstall, names in other case:\n%s%s", r.stdout, r.stderr)
	}
	r = fx.run("uninstall", "credential-vault", "--target", "cline", "--scope", "project")
	if want := "  removed         Cline [project]: credential-vault -> .cline/skills/credential-vault/SKILL.md\n"; r.stdout != want {
		t.Fatalf("uninstall:\n%s\nwant:\n%s", r.stdout, want)
	}
}

func TestUninstallDefaultsToTroubleshooting(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.ops("install", "--all-builtins", "--target", "codex", "--scope", "global")
	ops := fx.ops("uninstall", "--target", "codex", "--scope", "global")
	want := operation{Skill: "sandbox-troubleshooting", Target: "codex", TargetLabel: "Codex", Scope: "global",
		Path: filepath.Join(fx.home, ".agents/skills/sandbox-troubleshooting/SKILL.md"), Status: "removed", RequiresRestart: true}
	checkOps(t, ops, want)
	if _, err := os.Stat(filepath.Join(fx.home, ".agents/skills/sandbox-troubleshooting")); !os.IsNotExist(err) {
		t.Errorf("the skill's directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fx.home, ".agents/skills/sandbox-lifecycle/SKILL.md")); err != nil {
		t.Errorf("another skill went too: %v", err)
	}
}

func TestListShowsInstalledState(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.ops("install", "sandbox-lifecycle", "--target", "cursor", "--scope", "project")
	fx.ops("install", "file-operations", "--target", "copilot", "--scope", "global")
	// An old shared file with no marked block counts as not installed.
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
		"copilot/global/file-operations@" + filepath.Join(fx.home, ".copilot/skills/file-operations/SKILL.md"),
	}
	if !slices.Equal(installedAt, want) {
		t.Errorf("installed: %v\nwant: %v", installedAt, want)
	}
}

func TestEveryBundledSkillIsRegistered(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
