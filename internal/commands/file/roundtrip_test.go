package file_test

import (
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func payloads() map[string]string {
	big := make([]byte, 3<<20)
	rand.Read(big)
	return map[string]string{"empty": "", "binary": "\x00\xff\x00\xfe\r\n\x00", "3MB": string(big)}
}

func TestWriteThenCat(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	for name, data := range payloads() {
		t.Run(name, func(t *testing.T) {
			r := env.RunStdin(data, "file", "write", id, "/tmp/"+name)
			if r.Code != 0 || r.Stdout != "OK: Written: /tmp/"+name+"\n" || r.Stderr != "" {
				t.Fatalf("write: %+v", r)
			}
			got := env.Run("file", "cat", id, "/tmp/"+name)
			if got.Code != 0 || got.Stdout != data || got.Stderr != "" {
				t.Errorf("cat gave %d bytes (exit %d, stderr %q), want the %d written", len(got.Stdout), got.Code, got.Stderr, len(data))
			}
		})
	}
	// -c writes its value, with nothing added.
	env.Must("file", "write", id, "c.txt", "-c", "no newline")
	if got := env.Must("file", "cat", id, "/workspace/c.txt"); got != "no newline" {
		t.Errorf("cat after -c: %q", got)
	}
}

func TestUploadThenDownload(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	for name, data := range payloads() {
		t.Run(name, func(t *testing.T) {
			src := localFile(t, name, data, 0o600)
			r := env.Run("file", "upload", id, src, "dir/"+name)
			if r.Code != 0 || r.Stdout != "OK: Uploaded: "+src+" → dir/"+name+"\n" || r.Stderr != "" {
				t.Fatalf("upload: %+v", r)
			}
			dst := filepath.Join(t.TempDir(), "new", "dir", name)
			r = env.Run("file", "download", id, "dir/"+name, dst)
			if r.Code != 0 || r.Stdout != "OK: Downloaded: dir/"+name+" → "+dst+"\n" || r.Stderr != "" {
				t.Fatalf("download: %+v", r)
			}
			if got := readLocal(t, dst); got != data {
				t.Errorf("downloaded %d bytes, want the %d uploaded", len(got), len(data))
			}
			if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o644 {
				t.Errorf("new local file mode %v, want the default 0644 (umask 022)", fi.Mode())
			}
			noStaging(t, filepath.Dir(dst))
		})
	}
}

// TestStdinUpload sends standard input with "-".
func TestStdinUpload(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	r := env.RunStdin("from stdin\x00", "file", "upload", id, "-", "/tmp/in")
	if r.Code != 0 || r.Stdout != "OK: Uploaded: - → /tmp/in\n" {
		t.Fatalf("%+v", r)
	}
	if got := env.Must("file", "cat", id, "/tmp/in"); got != "from stdin\x00" {
		t.Errorf("%q", got)
	}
	// Uploads get the official default mode, 755.
	if out := env.Must("file", "info", id, "/tmp/in", "-o", "json"); !strings.Contains(out, `"mode": 755`) {
		t.Errorf("mode: %s", out)
	}
}

// TestLargeRoundTrip moves 96 MiB each way, generated on the fly.
func TestLargeRoundTrip(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("96 MiB transfer")
	}
	// Beyond the 64 MiB osb holds in memory for one answer: a download
	// that was not streamed would fail.
	const size = 96 << 20
	env, id := newSandbox(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "big")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	env.Must("file", "upload", id, src, "/tmp/big")
	dst := filepath.Join(dir, "back")
	env.Must("file", "download", id, "/tmp/big", dst)
	if sha(t, src) != sha(t, dst) {
		t.Fatal("the download differs from the upload")
	}
	os.Remove(dst)
	// cat streams to stdout just as well.
	if out := env.Run("file", "cat", id, "/tmp/big"); out.Code != 0 || len(out.Stdout) != size {
		t.Errorf("cat: exit %d, %d bytes", out.Code, len(out.Stdout))
	}
}
