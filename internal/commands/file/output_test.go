package file_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

var formats = []string{"table", "json", "yaml"}

// eachFormat runs one command line per format (args gets "-o FORMAT"
// appended; setup runs before each) and compares all of it, in order, with
// one golden file.
func eachFormat(t *testing.T, env *cmdtest.Env, id, name string, setup func(format string), args func(format string) []string) {
	t.Helper()
	var b strings.Builder
	for _, format := range formats {
		if setup != nil {
			setup(format)
		}
		r := env.Run(append(args(format), "-o", format)...)
		if r.Code != 0 {
			t.Fatalf("%s -o %s: exit %d: %s", name, format, r.Code, r.Stderr)
		}
		fmt.Fprintf(&b, "=== -o %s\n%s", format, r.Stdout)
		if r.Stderr != "" {
			b.WriteString("--- stderr\n" + r.Stderr)
		}
	}
	cmdtest.Golden(t, name, norm(b.String(), id))
}

func TestMessagesInEachFormat(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	local := localFile(t, "local.txt", "local content", 0o644)
	dlDir := t.TempDir()

	eachFormat(t, env, id, "write", nil, func(f string) []string {
		return []string{"file", "write", id, "/workspace/w-" + f + ".txt", "-c", "x", "--mode", "0640"}
	})
	var b strings.Builder
	for _, f := range formats {
		r := env.Run("file", "upload", id, local, "/workspace/up-"+f+".txt", "-o", f)
		fmt.Fprintf(&b, "=== -o %s\n%s", f, strings.ReplaceAll(r.Stdout, filepath.Dir(local), "<DIR>"))
	}
	cmdtest.Golden(t, "upload", norm(b.String(), id))
	b.Reset()
	for _, f := range formats {
		dst := filepath.Join(dlDir, "dl-"+f+".txt")
		r := env.Run("file", "download", id, "/workspace/up-"+f+".txt", dst, "-o", f)
		fmt.Fprintf(&b, "=== -o %s\n%s", f, strings.ReplaceAll(r.Stdout, dlDir, "<DIR>"))
	}
	cmdtest.Golden(t, "download", norm(b.String(), id))
	eachFormat(t, env, id, "mv", nil, func(f string) []string {
		return []string{"file", "mv", id, "/workspace/w-" + f + ".txt", "/workspace/moved/" + f + ".txt"}
	})
	eachFormat(t, env, id, "chmod", nil, func(f string) []string {
		return []string{"file", "chmod", id, "/workspace/moved/" + f + ".txt", "--mode", "600"}
	})
	eachFormat(t, env, id, "replace", nil, func(f string) []string {
		return []string{"file", "replace", id, "/workspace/up-" + f + ".txt", "--old", "local", "--new", "remote"}
	})
	if got := env.Must("file", "cat", id, "/workspace/up-json.txt"); got != "remote content" {
		t.Errorf("replace: %q", got)
	}
	eachFormat(t, env, id, "rm", nil, func(f string) []string {
		return []string{"file", "rm", id, "/workspace/up-" + f + ".txt", "/workspace/never-existed"}
	})
	eachFormat(t, env, id, "mkdir", nil, func(f string) []string {
		return []string{"file", "mkdir", id, "/workspace/d-" + f, "/workspace/d-" + f + "/sub", "--mode", "750"}
	})
	eachFormat(t, env, id, "rmdir", nil, func(f string) []string {
		return []string{"file", "rmdir", id, "/workspace/d-" + f}
	})
	for _, f := range formats {
		if remoteExists(t, env, id, "/workspace/d-"+f) || remoteExists(t, env, id, "/workspace/up-"+f+".txt") {
			t.Errorf("rm/rmdir left /workspace/*-%s", f)
		}
	}
}

// fixtureTree makes /workspace/proj with two files and a directory, all
// through osb, with fixed modes.
func fixtureTree(t *testing.T, env *cmdtest.Env, id string) {
	t.Helper()
	env.Must("file", "write", id, "/workspace/proj/readme.md", "-c", "# hello\n", "--mode", "644")
	env.Must("file", "write", id, "/workspace/proj/main.py", "-c", "print('hi')\n", "--mode", "755")
	env.Must("file", "write", id, "/workspace/proj/pkg/util.py", "-c", "x = 1\n", "--mode", "600")
}

func TestListingsInEachFormat(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	fixtureTree(t, env, id)
	eachFormat(t, env, id, "info", nil, func(string) []string {
		return []string{"file", "info", id, "/workspace/proj/readme.md", "proj/main.py"}
	})
	eachFormat(t, env, id, "search", nil, func(string) []string {
		return []string{"file", "search", id, "/workspace/proj", "-p", "*.py"}
	})
	eachFormat(t, env, id, "search_none", nil, func(string) []string {
		return []string{"file", "search", id, "/workspace/proj", "--pattern", "*.rs"}
	})
	eachFormat(t, env, id, "ls_long", nil, func(string) []string {
		return []string{"file", "ls", id, "/workspace/proj/pkg", "-l"}
	})
	// Names only: directories are listed too, deeper entries relative to PATH.
	for args, want := range map[string]string{
		"proj":           "main.py\npkg\nreadme.md\n",
		"proj --depth 2": "main.py\npkg\npkg/util.py\nreadme.md\n",
		"/ --depth 1":    "home\nroot\ntmp\nworkspace\n",
		"proj/pkg":       "util.py\n",
	} {
		r := env.Run(append([]string{"file", "ls", id}, strings.Fields(args)...)...)
		if r.Code != 0 || r.Stdout != want || r.Stderr != "" {
			t.Errorf("ls %s: exit %d %q %q, want %q", args, r.Code, r.Stdout, r.Stderr, want)
		}
	}
	// Sizes of directories and times depend on the machine: compare the rest.
	type entry struct {
		Path      string `json:"path"`
		EntryType string `json:"entry_type"`
		Mode      int    `json:"mode"`
		Owner     string `json:"owner"`
	}
	var got []entry
	out := env.Must("file", "ls", id, "proj", "-o", "json")
	want := []entry{
		{"/workspace/proj/main.py", "file", 755, "root"},
		{"/workspace/proj/pkg", "directory", 755, "root"},
		{"/workspace/proj/readme.md", "file", 644, "root"},
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || !slices.Equal(got, want) {
		t.Errorf("ls -o json: %v\n%s", err, out)
	}
}

// TestTerminalRendering shows tables and messages as a person sees them.
func TestTerminalRendering(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	fixtureTree(t, env, id)
	env.TTY = true
	// Times and owner names set the widths of the info table: check its frame only.
	info := env.Must("file", "info", id, "/workspace/proj/readme.md")
	if !strings.HasPrefix(info, "Path Info\n╭") || !strings.Contains(info, "│ /workspace/proj/readme.md │ 8    │ 644  │") {
		t.Errorf("info on a terminal:\n%s", info)
	}
	var b strings.Builder
	for _, args := range [][]string{
		{"file", "rm", id, "/workspace/proj/readme.md"},
		{"file", "mv", id, "/workspace/proj/main.py", "/workspace/proj/app.py"},
		{"file", "search", id, "/workspace/proj", "-p", "*.none"},
	} {
		r := env.Run(args...)
		fmt.Fprintf(&b, "=== %s\n%s", strings.Join(args[:2], " "), r.Stdout)
		if r.Stderr != "" {
			b.WriteString("--- stderr\n" + r.Stderr)
		}
	}
	cmdtest.Golden(t, "terminal", norm(b.String(), id))
}
