package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeFirstCommand is the first line of README.md's first sh block, less
// its trailing comment: what a new user pastes first.
func readmeFirstCommand(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```sh\n")
	if !ok {
		t.Fatal("README.md has no sh block")
	}
	line, _, _ := strings.Cut(block, "\n")
	if i := strings.Index(line, "   # "); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

// README's first command works as written on a machine where osb was never
// installed and Go's bin directory is not on PATH: a fresh GOPATH and HOME,
// PATH holding only the system directories and the go tool.
func TestReadmeFirstCommandOnAFreshMachine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("installs osb and runs the tour")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	line := readmeFirstCommand(t)
	if !strings.HasPrefix(line, "make install") {
		t.Fatalf("README's first command is %q; this test knows one that starts with make install", line)
	}
	env := func(name string) string {
		out, err := exec.Command(gotool, "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	fresh := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", line)
	cmd.Dir = "../.."
	cmd.Env = []string{
		"HOME=" + fresh,
		"GOPATH=" + filepath.Join(fresh, "go"),
		// Reuse what is already downloaded and compiled: the test is about
		// where osb lands and whether the line finds it, not the network.
		"GOMODCACHE=" + env("GOMODCACHE"),
		"GOCACHE=" + env("GOCACHE"),
		"GOFLAGS=" + env("GOFLAGS"),
		"GOTOOLCHAIN=local",
		"PATH=" + filepath.Dir(gotool) + ":/usr/sbin:/usr/bin:/sbin:/bin",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	if _, err := os.Stat(filepath.Join(fresh, "go", "bin", "osb")); err != nil {
		t.Errorf("osb not installed into the fresh GOPATH: %v", err)
	}
	for _, want := range []string{"$ osb version", "hello from the sandbox", "copied in"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the tour did not show %q:\n%s", want, out)
		}
	}
}
