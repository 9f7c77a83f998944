//go:build release

// These tests cross-compile every release target and check goreleaser.yaml:
// minutes of work, run by 'make release-check' (and .ci/run), not by 'make
// test'.

package main

import (
	"context"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/server/sandbox/program"
)

// goreleaser itself cannot run in every test environment, so this test
// checks what goreleaser.yaml says against the code it describes.

const (
	modulePath = "github.com/osb-dev/osb"
	repoRoot   = "../.."
)

type releaseConfig struct {
	Version int `yaml:"version"`
	Before  struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Builds []struct {
		ID      string   `yaml:"id"`
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	Archives []struct {
		IDs        []string      `yaml:"ids"`
		BuildsInfo fileInfo      `yaml:"builds_info"`
		Files      []archiveFile `yaml:"files"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
	} `yaml:"checksum"`
}

// archiveFile is either a glob or {src, dst, strip_parent, info}.
type archiveFile struct {
	Src  string   `yaml:"src"`
	Dst  string   `yaml:"dst"`
	Info fileInfo `yaml:"info"`
}

// fileInfo is what an archive entry records besides its bytes.
type fileInfo struct {
	Owner string `yaml:"owner"`
	Group string `yaml:"group"`
	Mtime string `yaml:"mtime"`
}

func (a *archiveFile) UnmarshalYAML(unmarshal func(any) error) error {
	if unmarshal(&a.Src) == nil {
		return nil
	}
	type plain archiveFile
	return unmarshal((*plain)(a))
}

func loadReleaseConfig(t *testing.T) releaseConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg releaseConfig
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("goreleaser.yaml: %v", err)
	}
	if cfg.Version != 2 {
		t.Fatalf("goreleaser.yaml: version %d, want 2", cfg.Version)
	}
	if len(cfg.Builds) != 1 || len(cfg.Archives) == 0 {
		t.Fatalf("goreleaser.yaml: want one build and an archive, got %d builds, %d archives", len(cfg.Builds), len(cfg.Archives))
	}
	return cfg
}

func TestReleaseBuildsEveryTarget(t *testing.T) {
	b := loadReleaseConfig(t).Builds[0]
	if b.Main != "./cmd/osb" || b.Binary != "osb" {
		t.Errorf("build main %q binary %q, want ./cmd/osb and osb", b.Main, b.Binary)
	}
	if !hasMainFunc(t, filepath.Join(repoRoot, b.Main)) {
		t.Errorf("%s holds no main package", b.Main)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build env %v lacks CGO_ENABLED=0 (the binary must be static)", b.Env)
	}
	for _, os := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(b.Goos, os) {
			t.Errorf("goos %v lacks %s", b.Goos, os)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(b.Goarch, arch) {
			t.Errorf("goarch %v lacks %s", b.Goarch, arch)
		}
	}
	if !slices.Contains(b.Flags, "-tags=sandboxprogram") {
		t.Errorf("build flags %v lack -tags=sandboxprogram (the sandbox program osb carries)", b.Flags)
	}
}

var stampRE = regexp.MustCompile(`-X ([^=\s]+)\.(\w+)=`)

// Every -X must name a string variable that exists, and every variable of
// internal/build must be stamped.
func TestReleaseStampsRealVariables(t *testing.T) {
	b := loadReleaseConfig(t).Builds[0]
	stamped := map[string]bool{}
	for _, fl := range b.Ldflags {
		for _, m := range stampRE.FindAllStringSubmatch(fl, -1) {
			pkg, name := m[1], m[2]
			rel, ok := strings.CutPrefix(pkg, modulePath+"/")
			if !ok {
				t.Errorf("ldflags stamp %s.%s is outside the module", pkg, name)
				continue
			}
			if !stringVars(t, filepath.Join(repoRoot, rel))[name] {
				t.Errorf("ldflags stamp %s.%s: no such string variable", pkg, name)
			}
			stamped[rel+"."+name] = true
		}
	}
	for name := range stringVars(t, filepath.Join(repoRoot, "internal/build")) {
		if !stamped["internal/build."+name] {
			t.Errorf("internal/build.%s is not stamped by ldflags", name)
		}
	}
}

// The hooks must run only programs, commands and flags that exist, and
// produce the files the archives pick up.
func TestReleaseHooksAndArchiveFiles(t *testing.T) {
	cfg := loadReleaseConfig(t)
	generated := map[string]bool{}
	for _, hook := range cfg.Before.Hooks {
		checkHook(t, hook, generated)
	}
	if len(generated) == 0 {
		t.Error("no hook writes the completion scripts")
	}
	for _, a := range cfg.Archives {
		for _, id := range a.IDs {
			if id != cfg.Builds[0].ID {
				t.Errorf("archive refers to build %q, which does not exist", id)
			}
		}
		for _, f := range a.Files {
			if n := countGenerated(f.Src, generated); n > 0 {
				continue
			}
			matches, err := filepath.Glob(filepath.Join(repoRoot, f.Src))
			if err != nil || len(matches) == 0 {
				t.Errorf("archive file %q matches nothing in the repository or the hooks' output", f.Src)
			}
		}
	}
	if cfg.Checksum.NameTemplate == "" {
		t.Error("no checksum file")
	}
}

func countGenerated(glob string, generated map[string]bool) int {
	n := 0
	for path := range generated {
		if ok, _ := filepath.Match(glob, path); ok {
			n++
		}
	}
	return n
}

var shRedirect = regexp.MustCompile(`^sh -c "(.*) > (\S+)"$`)

func checkHook(t *testing.T, hook string, generated map[string]bool) {
	t.Helper()
	cmdline, outFile := hook, ""
	if m := shRedirect.FindStringSubmatch(hook); m != nil {
		cmdline, outFile = m[1], m[2]
	}
	words := strings.Fields(cmdline)
	switch {
	case hook == "go mod download", hook == "mkdir -p completions":
	case hook == "make sandbox-programs":
		checkProgramsHook(t, loadReleaseConfig(t).Builds[0].Goarch)
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./internal/docsgen":
		for _, page := range runDocsgenHook(t, hook, words[3:]) {
			generated[page] = true
		}
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/osb" && outFile != "":
		out := runOsb(t, words[3:])
		if len(out) < 500 || !strings.Contains(out, "osb") {
			t.Errorf("hook %q: osb %s printed no script:\n%.200s", hook, strings.Join(words[3:], " "), out)
		}
		generated[outFile] = true
	default:
		t.Errorf("hook %q is not one this test knows how to check; teach it", hook)
	}
}

// checkProgramsHook checks that make sandbox-programs builds
// cmd/osb-sandbox where package program embeds it, for every Linux
// architecture the release builds osb for.
func checkProgramsHook(t *testing.T, goarch []string) {
	t.Helper()
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make to check the sandbox-programs hook with")
	}
	cmd := exec.Command(makeBin, "-s", "-n", "sandbox-programs")
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n sandbox-programs: %v\n%s", err, out)
	}
	for _, arch := range goarch {
		want := "-o internal/server/sandbox/program/" + program.File("linux", arch) + " ./cmd/osb-sandbox"
		if !strings.Contains(string(out), want) {
			t.Errorf("make sandbox-programs does not build %q:\n%s", want, out)
		}
	}
}

// The values a release fills into the hooks' templates.
const releaseVersion, releaseDate = "9.9.9", "2026-01-02T03:04:05Z"

// runDocsgenHook checks the flags a docsgen hook passes, runs docsgen with
// them (templates filled in as a release would) into a temporary directory,
// checks each man page is headed by the release's version and date, and
// returns the pages' paths as the hook writes them.
func runDocsgenHook(t *testing.T, hook string, args []string) []string {
	t.Helper()
	fs := flag.NewFlagSet("docsgen", flag.ContinueOnError)
	values := map[string]*string{}
	var manOnly bool
	flag.VisitAll(func(f *flag.Flag) {
		if f.Name == "man-only" {
			fs.BoolVar(&manOnly, f.Name, false, "")
			return
		}
		values[f.Name] = fs.String(f.Name, f.DefValue, "")
	})
	fill := strings.NewReplacer("{{.Version}}", releaseVersion, "{{.CommitDate}}", releaseDate)
	filled := make([]string, len(args))
	for i, a := range args {
		filled[i] = fill.Replace(a)
	}
	if err := fs.Parse(filled); err != nil || fs.NArg() > 0 {
		t.Errorf("hook %q: docsgen cannot take these flags: %v %v", hook, err, fs.Args())
		return nil
	}
	manDir := *values["man-dir"]
	if !manOnly || manDir == "" || *values["version"] != releaseVersion || *values["date"] != releaseDate {
		t.Errorf("hook %q: want -man-only, -man-dir and the release's {{.Version}} and {{.CommitDate}}", hook)
		return nil
	}
	stamp, err := ParseManStamp(*values["version"], *values["date"])
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := run(filepath.Join(repoRoot, "docs"), out, true, stamp); err != nil {
		t.Fatalf("hook %q: %v", hook, err)
	}
	pages, _ := filepath.Glob(filepath.Join(out, "*.1"))
	if len(pages) == 0 {
		t.Fatalf("hook %q wrote no man page", hook)
	}
	var written []string
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		head, _, _ := strings.Cut(string(b), "\n")
		if !strings.Contains(head, `"2026-01-02" "osb 9.9.9"`) {
			t.Errorf("%s: header %q lacks the release's date and version", filepath.Base(p), head)
		}
		written = append(written, filepath.Join(manDir, filepath.Base(p)))
	}
	return written
}

// Archives are reproducible: every entry, binary and files alike, takes the
// commit's time and fixed owners, whoever builds them and when. Every
// archive ships the licence.
func TestReleaseArchivesAreReproducible(t *testing.T) {
	const commitTime = "{{ .CommitDate }}"
	for i, a := range loadReleaseConfig(t).Archives {
		if a.BuildsInfo.Mtime != commitTime || a.BuildsInfo.Owner == "" || a.BuildsInfo.Group == "" {
			t.Errorf("archive %d: builds_info %+v, want mtime %s and fixed owner and group", i, a.BuildsInfo, commitTime)
		}
		licensed := false
		for _, f := range a.Files {
			if f.Info.Mtime != commitTime || f.Info.Owner == "" || f.Info.Group == "" {
				t.Errorf("archive %d: file %s info %+v, want mtime %s and fixed owner and group", i, f.Src, f.Info, commitTime)
			}
			licensed = licensed || f.Src == "LICENSE"
		}
		if !licensed {
			t.Errorf("archive %d does not ship LICENSE", i)
		}
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "LICENSE"))
	if err != nil || !strings.Contains(string(b), "Apache License") || !strings.Contains(string(b), "Version 2.0, January 2004") {
		t.Errorf("LICENSE is not the Apache License 2.0: %v", err)
	}
}

// runOsb runs an osb command line in-process, as the hook would.
func runOsb(t *testing.T, args []string) string {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := cmdutil.New(ios, func(string) string { return "" })
	if code := commands.Run(context.Background(), f, args); code != 0 {
		t.Errorf("osb %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out.String()
}

func hasMainFunc(t *testing.T, dir string) bool {
	found := false
	eachFile(t, dir, func(f *ast.File) {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && f.Name.Name == "main" && fd.Recv == nil && fd.Name.Name == "main" {
				found = true
			}
		}
	})
	return found
}

// stringVars lists the package-level string variables declared in dir.
func stringVars(t *testing.T, dir string) map[string]bool {
	vars := map[string]bool{}
	eachFile(t, dir, func(f *ast.File) {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if isStringSpec(vs, i) {
						vars[name.Name] = true
					}
				}
			}
		}
	})
	return vars
}

func isStringSpec(vs *ast.ValueSpec, i int) bool {
	if id, ok := vs.Type.(*ast.Ident); ok {
		return id.Name == "string"
	}
	if vs.Type == nil && i < len(vs.Values) {
		lit, ok := vs.Values[i].(*ast.BasicLit)
		return ok && lit.Kind == token.STRING
	}
	return false
}

func eachFile(t *testing.T, dir string, fn func(*ast.File)) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		fn(f)
	}
}

// Where goreleaser itself is installed, it validates the file too.
func TestGoreleaserCheck(t *testing.T) {
	bin, err := exec.LookPath("goreleaser")
	if err != nil {
		t.Skip("goreleaser is not installed; the tests above check what they can without it")
	}
	cmd := exec.Command(bin, "check", "--config", "goreleaser.yaml")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("goreleaser check: %v\n%s", err, out)
	}
}

// Every operating system the release targets must compile: goreleaser
// builds them all, and a Linux-only field or signal breaks the release.
// One architecture per system is enough to catch that.
func TestReleaseTargetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the whole program")
	}
	b := loadReleaseConfig(t).Builds[0]
	for _, goos := range b.Goos {
		t.Run(goos, func(t *testing.T) {
			cmd := exec.Command("go", "build", "-o", os.DevNull, b.Main)
			cmd.Dir = repoRoot
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOOS=%s go build %s: %v\n%s", goos, b.Main, err, out)
			}
		})
	}
}

// The stamp a release writes is what `osb --version` shows: version, short
// commit and date, from the Makefile's ldflags (make build) and from
// goreleaser's, with its templates filled in as a release would.
func TestVersionShowsTheStamp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds osb twice")
	}
	const version, commit, date = "v9.9.9", "0123456789abcdef0123456789abcdef01234567", "2026-01-02T03:04:05Z"
	want := "opensandbox, version " + version + " (commit 0123456789ab, built " + date + ")\n"
	b := loadReleaseConfig(t).Builds[0]
	release := strings.NewReplacer("{{ .Version }}", version, "{{ .FullCommit }}", commit, "{{ .CommitDate }}", date).
		Replace(strings.Join(b.Ldflags, " "))
	sources := map[string]string{"goreleaser.yaml": release}
	if makeBin, err := exec.LookPath("make"); err == nil {
		cmd := exec.Command(makeBin, "-s", "-n", "build", "VERSION="+version, "COMMIT="+commit, "DATE="+date)
		cmd.Dir = repoRoot
		out, err := cmd.Output()
		m := regexp.MustCompile(`-ldflags '([^']*)'`).FindSubmatch(out)
		if err != nil || m == nil {
			t.Fatalf("make -n build: %v, no -ldflags in:\n%s", err, out)
		}
		sources["make build"] = string(m[1])
	}
	for source, ldflags := range sources {
		bin := filepath.Join(t.TempDir(), "osb")
		build := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, b.Main)
		build.Dir = repoRoot
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("%s: go build: %v\n%s", source, err, out)
		}
		out, err := exec.Command(bin, "--version").Output()
		if err != nil || string(out) != want {
			t.Errorf("%s: osb --version = %q (%v), want %q", source, out, err, want)
		}
	}
}
