package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOfficialCLIFiles(t *testing.T) {
	h := start(t)
	tw := h.twins(t, nil)
	sb := cmp{label: "<SANDBOX>"}
	on := func(words ...string) cmp { c := sb; c.args = args(words...); return c }
	// Each CLI writes its own copy at a different moment.
	stamped := map[string]string{
		"[].modified_at": "each CLI wrote its copy at another moment",
		"[].created_at":  "each CLI wrote its copy at another moment",
	}

	t.Run("write", func(t *testing.T) {
		h.compare(t, tw, on("file", "write", "ID", "/workspace/notes.txt", "-c", "hello world\nsecond line\n", "--mode", "640"))
		// Content from stdin, as `echo ... | osb file write` does.
		if r := h.run(t, "from stdin\n", "", h.osb, "file", "write", tw[0], "/workspace/stdin.txt"); r.Code != 0 {
			t.Fatalf("official file write from stdin: exit %d: %s", r.Code, r.Stderr)
		}
		if got := h.ours.Must("file", "cat", tw[0], "/workspace/stdin.txt"); got != "from stdin\n" {
			t.Errorf("written from stdin: %q", got)
		}
	})
	t.Run("cat", func(t *testing.T) {
		for _, id := range tw {
			if got := h.sameRaw(t, "file", "cat", id, "/workspace/notes.txt"); got != "hello world\nsecond line\n" {
				t.Errorf("cat printed %q", got)
			}
		}
	})
	t.Run("info", func(t *testing.T) {
		c := on("file", "info", "ID", "/workspace/notes.txt")
		c.vary = stamped
		h.compare(t, tw, c)
		out := h.officialOK(t, "file", "info", tw[0], "/workspace/notes.txt", "-o", "json")
		if !strings.Contains(out, `"mode": 640`) || !strings.Contains(out, `"size": 24`) {
			t.Errorf("official info after write --mode 640:\n%s", out)
		}
	})
	t.Run("mkdir", func(t *testing.T) {
		h.compare(t, tw, on("file", "mkdir", "ID", "/workspace/d1/sub", "/workspace/d2", "--mode", "700"))
	})
	t.Run("upload", func(t *testing.T) {
		local := filepath.Join(t.TempDir(), "data.bin")
		data := []byte("bytes \x00\xff\r\n as they are")
		if err := os.WriteFile(local, data, 0o644); err != nil {
			t.Fatal(err)
		}
		h.compare(t, tw, on("file", "upload", "ID", local, "/workspace/d1/data.bin"))
		for _, id := range tw {
			if got := h.ours.Must("file", "cat", id, "/workspace/d1/data.bin"); got != string(data) {
				t.Errorf("uploaded file holds %q", got)
			}
		}
	})
	t.Run("download", func(t *testing.T) {
		dst := twin{filepath.Join(t.TempDir(), "got.bin"), filepath.Join(t.TempDir(), "got.bin")}
		c := cmp{label: "<SANDBOX>", also: map[string]twin{"<LOCAL>": dst}}
		c.args = func(id string) []string {
			local := dst[0]
			if id == tw[1] {
				local = dst[1]
			}
			return []string{"file", "download", id, "/workspace/d1/data.bin", local}
		}
		h.compare(t, tw, c)
		for _, p := range dst {
			if got, err := os.ReadFile(p); err != nil || string(got) != "bytes \x00\xff\r\n as they are" {
				t.Errorf("downloaded %s: %q %v", p, got, err)
			}
		}
	})
	t.Run("download to stdout", func(t *testing.T) {
		if got := h.sameRaw(t, "file", "download", tw[0], "/workspace/d1/data.bin", "/dev/stdout"); got != "bytes \x00\xff\r\n as they are" {
			t.Errorf("download to /dev/stdout printed %q", got)
		}
	})
	t.Run("search", func(t *testing.T) {
		c := on("file", "search", "ID", "/workspace", "--pattern", "*.bin")
		c.vary = stamped
		h.compare(t, tw, c)
	})
	t.Run("chmod", func(t *testing.T) {
		h.compare(t, tw, on("file", "chmod", "ID", "/workspace/notes.txt", "--mode", "600"))
		out := h.ours.Must("file", "info", tw[0], "/workspace/notes.txt", "-o", "json")
		if !strings.Contains(out, `"mode": 600`) {
			t.Errorf("after the official chmod 600:\n%s", out)
		}
	})
	t.Run("replace", func(t *testing.T) {
		h.compare(t, tw, on("file", "replace", "ID", "/workspace/notes.txt", "--old", "world", "--new", "there"))
		if got := h.ours.Must("file", "cat", tw[0], "/workspace/notes.txt"); got != "hello there\nsecond line\n" {
			t.Errorf("after the official replace: %q", got)
		}
	})
	t.Run("mv", func(t *testing.T) {
		h.compare(t, tw, on("file", "mv", "ID", "/workspace/notes.txt", "/workspace/d2/moved.txt"))
		if got := h.ours.Must("file", "cat", tw[0], "/workspace/d2/moved.txt"); got != "hello there\nsecond line\n" {
			t.Errorf("after the official mv: %q", got)
		}
	})
	t.Run("rm", func(t *testing.T) {
		h.compare(t, tw, on("file", "rm", "ID", "/workspace/d2/moved.txt", "/workspace/stdin.txt"))
		if r := h.ours.Run("file", "info", tw[0], "/workspace/d2/moved.txt"); r.Code == 0 {
			t.Errorf("the file is still there after the official rm")
		}
	})
	t.Run("rmdir", func(t *testing.T) {
		h.compare(t, tw, on("file", "rmdir", "ID", "/workspace/d1", "/workspace/d2"))
		if r := h.ours.Run("file", "info", tw[0], "/workspace/d1"); r.Code == 0 {
			t.Errorf("the directory is still there after the official rmdir")
		}
	})
	t.Run("outside workspace", func(t *testing.T) {
		// The real execd reads any path of the sandbox's filesystem.
		out := h.officialOK(t, "file", "cat", tw[0], "/etc/os-release")
		if !strings.Contains(out, "ID=") {
			t.Errorf("official cat /etc/os-release printed %q", out)
		}
	})
}

// Timestamps the server sends in nanoseconds are printed by the official
// CLI to the microsecond with all six digits (Python's isoformat), and with
// no fraction at all when it is zero.
func TestOfficialCLIFileTimes(t *testing.T) {
	h := start(t)
	id := h.sandbox(t, nil)
	h.ours.Must("command", "run", id, "--", "sh", "-c",
		"touch /workspace/a /workspace/b /workspace/c && touch -d '2026-01-02 03:04:05.120000' /workspace/a"+
			" && touch -d '2026-01-02 03:04:05' /workspace/b && touch -d '2026-01-02 03:04:05.123456789' /workspace/c")
	for _, f := range []string{"/workspace/a", "/workspace/b", "/workspace/c"} {
		h.same(t, f, cmp{args: func(p string) []string { return []string{"file", "info", id, p} }})
	}
}
