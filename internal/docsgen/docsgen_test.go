package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var docsDir = filepath.Join("..", "..", "docs")

// The committed reference must be what the command tree generates now.
func TestCommittedDocsAreCurrent(t *testing.T) {
	t.Parallel()
	pages, err := Generate(NewTree(), docsDir, ManStamp{})
	if err != nil {
		t.Fatal(err)
	}
	for sub, want := range pages {
		dir := filepath.Join(docsDir, sub)
		got := readDir(t, dir)
		var stale []string
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				stale = append(stale, name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				stale = append(stale, name+" (no such command)")
			}
		}
		if len(stale) > 0 {
			sort.Strings(stale)
			t.Errorf("docs/%s is stale; run `go run ./internal/docsgen` (or make docs). Differs: %s", sub, strings.Join(stale, ", "))
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// Generating twice gives the same bytes: nothing depends on time, maps or
// the environment of whoever runs it.
func TestGenerationIsStable(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("OPEN_SANDBOX_DOMAIN", "elsewhere.example:1")
	a, _ := Generate(NewTree(), docsDir, ManStamp{})
	b, _ := Generate(NewTree(), docsDir, ManStamp{})
	for sub := range a {
		for name := range a[sub] {
			if !bytes.Equal(a[sub][name], b[sub][name]) {
				t.Errorf("%s/%s differs between two runs", sub, name)
			}
		}
	}
}

func TestEveryCommandHasPages(t *testing.T) {
	t.Parallel()
	pages, _ := Generate(NewTree(), docsDir, ManStamp{})
	for _, name := range []string{"osb.md", "osb_completion_bash.md", "osb_help_exit-codes.md", "osb_config_set.md", "README.md"} {
		if _, ok := pages["cli"][name]; !ok {
			t.Errorf("docs/cli/%s not generated", name)
		}
	}
	for _, name := range []string{"osb.1", "osb-completion-zsh.1", "osb-help-exit-codes.1"} {
		if _, ok := pages["man"][name]; !ok {
			t.Errorf("docs/man/%s not generated", name)
		}
	}
	if p := string(pages["cli"]["osb_config_set.md"]); !strings.Contains(p, "## Global options") || !strings.Contains(p, "--request-timeout int") {
		t.Errorf("osb_config_set.md lacks the global options:\n%s", p)
	}
}

func TestMarkdownEscaping(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"replaces <TIME> and *all*":     `replaces \<TIME\> and \*all\*`,
		"keep `a <b> *c*` as code":      "keep `a <b> *c*` as code",
		"OPEN_SANDBOX_API_KEY or _x":    `OPEN_SANDBOX_API_KEY or \_x`,
		"- not a list":                  `\- not a list`,
		"1. not a list":                 `1\. not a list`,
		"exit 1. Then":                  "exit 1. Then",
		"osb __complete is cobra's own": `osb \__complete is cobra's own`,
	} {
		if got := mdEscape(in); got != want {
			t.Errorf("mdEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRoffEscaping(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`.config file`:  `\&.config file`,
		`'quoted' text`: `\&'quoted' text`,
		`a\b --flag`:    `a\eb \-\-flag`,
	} {
		if got := roffLine(in); got != want {
			t.Errorf("roffLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLiteralBlocksStayVerbatim(t *testing.T) {
	t.Parallel()
	text := "Codes:\n\n  0    success\n  2    usage\n\nMore prose."
	md := mdText(text)
	if !strings.Contains(md, "```\n0    success\n2    usage\n```") {
		t.Errorf("indented block not kept as code:\n%s", md)
	}
	man := manText(text)
	if !strings.Contains(man, ".nf\n0    success\n2    usage\n.fi") {
		t.Errorf("indented block not kept literal:\n%s", man)
	}
}

// Every man page renders without a warning, when groff is installed.
func TestManPagesRender(t *testing.T) {
	t.Parallel()
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed")
	}
	pages, _ := Generate(NewTree(), docsDir, ManStamp{})
	for name, page := range pages["man"] {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// -k runs preconv first, as man does, so UTF-8 text is read as such.
			cmd := exec.Command(groff, "-k", "-man", "-Tutf8", "-ww", "-z")
			cmd.Stdin = bytes.NewReader(page)
			out, err := cmd.CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Errorf("groff: %v\n%s", err, out)
			}
		})
	}
}
