package file_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
)

// Bad input is refused with exit 2 before any request: the server here is
// unreachable, so reaching it would fail differently (exit 6).
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "127.0.0.1:1"
	dir := t.TempDir()
	mode := "invalid permission mode '%s'. Use a permission value like 644 or 755"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"write", "sb", "/f", "-c", "x", "--mode", "0o755"}, strings.Replace(mode, "%s", "0o755", 1)},
		{[]string{"write", "sb", "/f", "-c", "x", "--mode", "rwx"}, strings.Replace(mode, "%s", "rwx", 1)},
		{[]string{"write", "sb", "/f", "-c", "x", "--mode", "789"}, strings.Replace(mode, "%s", "789", 1)},
		{[]string{"mkdir", "sb", "/d", "--mode", "-1"}, strings.Replace(mode, "%s", "-1", 1)},
		{[]string{"chmod", "sb", "/f", "--mode", "u+x"}, strings.Replace(mode, "%s", "u+x", 1)},
		{[]string{"chmod", "sb", "/f"}, `required flag(s) "mode" not set`},
		{[]string{"replace", "sb", "/f", "--old", "", "--new", "x"}, "--old must not be empty"},
		{[]string{"replace", "sb", "/f", "--old", "a"}, `required flag(s) "new" not set`},
		{[]string{"search", "sb", "/"}, `required flag(s) "pattern" not set`},
		{[]string{"cat", "sb", "/f", "--encoding", "latin-1"}, "unsupported encoding 'latin-1'"},
		{[]string{"cat", "sb", "/f", "-o", "json"}, "'json' is not one of 'raw'"},
		{[]string{"upload", "sb", dir + "/missing", "/f"}, "local path '" + dir + "/missing' does not exist"},
		{[]string{"upload", "sb", dir, "/f"}, "is a directory; upload takes a file"},
		{[]string{"download", "sb", "/f", dir + "/missing/"}, "no such directory"},
		{[]string{"ls", "sb", "/", "--depth", "0"}, "--depth must be 1 or more"},
		{[]string{"rm", "sb"}, "missing PATH"},
		{[]string{"mv", "sb", "a"}, "missing DESTINATION"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			env.Run(append([]string{"file"}, tc.args...)...).ExpectError(t, 2, tc.want)
		})
	}
}

func TestServerErrors(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	env.Must("file", "write", id, "/workspace/a", "-c", "A")
	env.Must("file", "write", id, "/workspace/b", "-c", "B")
	env.Must("file", "mkdir", id, "/workspace/dir")

	env.Run("file", "cat", id, "/workspace/nope").ExpectError(t, 4, "file not found. open /workspace/nope: no such file or directory (HTTP 404, code FILE_NOT_FOUND)")
	env.Run("file", "info", id, "/workspace/a", "/workspace/nope").ExpectError(t, 4, "file not found")
	env.Run("file", "mv", id, "/workspace/a", "/workspace/b").ExpectError(t, 1, "destination path already exists: /workspace/b")
	if got := env.Must("file", "cat", id, "/workspace/b"); got != "B" {
		t.Errorf("mv replaced its destination: %q", got)
	}
	env.Run("file", "rm", id, "/workspace/dir").ExpectError(t, 1, "path is a directory")
	env.Run("file", "cat", id, "../../etc/passwd").ExpectError(t, 1, "outside the sandbox filesystem")
	env.Run("file", "ls", id, "/workspace/a").ExpectError(t, 1, "path is not a directory: /workspace/a")
	env.Run("file", "cat", "no-such-sandbox", "/workspace/a").ExpectError(t, 4, "")

	// Under -o json an error is an object on stderr, stdout stays empty.
	r := env.Run("file", "info", id, "/workspace/nope", "-o", "json")
	var obj map[string]any
	if r.Code != 4 || r.Stdout != "" || json.Unmarshal([]byte(r.Stderr), &obj) != nil || obj["code"] != "FILE_NOT_FOUND" || obj["http_status"] != 404.0 {
		t.Errorf("json error: %+v", r)
	}
}

// The local server drops setuid, setgid and sticky bits as execd does:
// chmod and write report that instead of success; a plain mode is not
// checked, and succeeds as before.
func TestSpecialBitsTheServerDrops(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	env.Must("file", "write", id, "/workspace/tool", "-c", "#!/bin/sh")
	env.Run("file", "chmod", id, "/workspace/tool", "--mode", "4755").
		ExpectError(t, 1, "the server did not set mode 4755 on /workspace/tool: it kept 755 and dropped the setuid, setgid and sticky bits")
	env.Run("file", "write", id, "/workspace/shared", "-c", "x", "--mode", "1777").
		ExpectError(t, 1, "the server did not set mode 1777 on /workspace/shared: it kept 777 and dropped the setuid, setgid and sticky bits")
	if r := env.Run("file", "chmod", id, "/workspace/tool", "--mode", "0700"); r.Code != 0 || r.Stdout != "OK: Permissions set: /workspace/tool\n" {
		t.Errorf("plain chmod: %+v", r)
	}
}

// TestProgress: a progress bar goes to stderr only when a person can see
// it, and never under -o json or -o yaml.
func TestProgress(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	src := localFile(t, "f", strings.Repeat("x", 1<<20), 0o644)
	for _, tc := range []struct {
		tty      bool
		format   string
		progress bool
	}{{true, "table", true}, {true, "json", false}, {true, "yaml", false}, {false, "table", false}} {
		env.TTY = tc.tty
		up := env.Run("file", "upload", id, src, "/tmp/f", "-o", tc.format)
		down := env.Run("file", "download", id, "/tmp/f", t.TempDir()+"/f", "-o", tc.format)
		for verb, r := range map[string]cmdtest.Result{"Uploading": up, "Downloading": down} {
			if r.Code != 0 {
				t.Fatalf("%+v", r)
			}
			// The bar shows the bytes moved of the total, besides the rate,
			// and is erased once done.
			last := r.Stderr[strings.LastIndex(r.Stderr, "\r")+1:]
			if shown := strings.Contains(r.Stderr, verb+" f") && strings.Contains(r.Stderr, "/1.0 MB") && strings.TrimSpace(last) == ""; shown != tc.progress {
				t.Errorf("tty %v -o %s: %s progress shown %v, stderr %q", tc.tty, tc.format, verb, shown, r.Stderr)
			}
			if !tc.progress && r.Stderr != "" {
				t.Errorf("tty %v -o %s: stderr %q", tc.tty, tc.format, r.Stderr)
			}
		}
	}
	// Standard input has no known size: the bar counts bytes alone.
	env.TTY = true
	if r := env.RunStdin(strings.Repeat("y", 1<<20), "file", "upload", id, "-", "/tmp/in"); r.Code != 0 || !regexp.MustCompile(`Uploading standard input \([\d.]+ [kM]B`).MatchString(r.Stderr) {
		t.Errorf("upload from stdin on a terminal: exit %d, stderr %q", r.Code, r.Stderr)
	}
	// Not even on a terminal when the download goes to stdout.
	if r := env.Run("file", "download", id, "/tmp/f", "-"); r.Code != 0 || len(r.Stdout) != 1<<20 || r.Stderr != "" {
		t.Errorf("download to stdout on a terminal: exit %d, %d bytes, stderr %q", r.Code, len(r.Stdout), r.Stderr)
	}
}

// TestStdinHint: write without -c tells a person at a terminal how to end input.
func TestStdinHint(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	for _, tty := range []bool{true, false} {
		ios, in, out, errOut := iostreams.Test()
		in.WriteString("typed")
		ios.SetTTY(tty, false, false)
		f := cmdutil.New(ios, func(k string) string { return env.Vars[k] })
		code := commands.Run(t.Context(), f, []string{"file", "write", id, "/tmp/typed"})
		hint := "Reading from stdin (Ctrl+D to finish):\n"
		if want := map[bool]string{true: hint, false: ""}[tty]; code != 0 || errOut.String() != want || out.String() != "OK: Written: /tmp/typed\n" {
			t.Errorf("stdin tty %v: exit %d, stdout %q, stderr %q", tty, code, out, errOut)
		}
	}
	if got := env.Must("file", "cat", id, "/tmp/typed"); got != "typed" {
		t.Errorf("%q", got)
	}
}
