package transfer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/umask"
)

// staging lists the staging directories left in dir.
func staging(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, StagePrefix+"*"))
	return m
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, d *Destination, s string) {
	t.Helper()
	if _, err := io.WriteString(d, s); err != nil {
		t.Fatal(err)
	}
}

func TestNewFileWithParents(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "a", "b", "new.bin")
	d, err := Open(dst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d, "\x00\xffdata")
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("destination exists before Commit: %v", err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, dst); got != "\x00\xffdata" {
		t.Errorf("content %q", got)
	}
	mask := umask.Set(0)
	umask.Set(mask)
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o666&^os.FileMode(mask) {
		t.Errorf("new file mode %v, want the default for new files", fi.Mode())
	}
	if s := staging(t, filepath.Dir(dst)); len(s) != 0 {
		t.Errorf("staging left: %v", s)
	}
}

func TestReplaceOnlyOnCommit(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "file")
	os.WriteFile(dst, []byte("old content"), 0o600)
	d, err := Open(dst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d, "new")
	if got := mustRead(t, dst); got != "old content" {
		t.Fatalf("replaced before Commit: %q", got)
	}
	if s := staging(t, dir); len(s) != 1 {
		t.Fatalf("want one staging dir beside the file, got %v", s)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	d.Abort() // harmless after Commit
	if got := mustRead(t, dst); got != "new" {
		t.Errorf("content %q", got)
	}
	if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o600 {
		t.Errorf("old mode not kept: %v", fi.Mode())
	}
	if s := staging(t, dir); len(s) != 0 {
		t.Errorf("staging left: %v", s)
	}
}

func TestAbortKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "file")
	old := []byte("old \x00 bytes")
	os.WriteFile(dst, old, 0o640)
	d, err := Open(dst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d, "partial")
	d.Abort()
	d.Abort()
	if got := mustRead(t, dst); got != string(old) {
		t.Errorf("old file changed: %q", got)
	}
	if s := staging(t, dir); len(s) != 0 {
		t.Errorf("staging left: %v", s)
	}
}

func TestSymlinksAreFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink("real", link)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("sub/later", dangling)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)

	for path, wantFile := range map[string]string{link: target, dangling: filepath.Join(dir, "sub", "later")} {
		d, err := Open(path, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		write(t, d, "via "+filepath.Base(path))
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink: %v %v", path, fi, err)
		}
		if got := mustRead(t, wantFile); got != "via "+filepath.Base(path) {
			t.Errorf("%s: %q", wantFile, got)
		}
	}
}

func TestRefusedBeforeAnyTransfer(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, io.Discard); err == nil || err.Error() != dir+": is a directory" {
		t.Errorf("directory: %v", err)
	}
	ro := filepath.Join(dir, "read-only")
	os.WriteFile(ro, []byte("keep"), 0o444)
	makeUnwritable(t, ro)
	if _, err := Open(ro, io.Discard); !errors.Is(err, os.ErrPermission) {
		t.Errorf("read-only file: %v", err)
	}
	if got := mustRead(t, ro); got != "keep" {
		t.Errorf("read-only file changed: %q", got)
	}
	if s := staging(t, dir); len(s) != 0 {
		t.Errorf("staging left: %v", s)
	}
}

// makeUnwritable makes a file that even root cannot open for writing.
func makeUnwritable(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return // mode 0444 is enough
	}
	if err := exec.Command("chattr", "+i", path).Run(); err != nil {
		t.Skipf("running as root and chattr +i failed (%v): cannot make an unwritable file", err)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

func TestStdoutIsRecognised(t *testing.T) {
	var buf bytes.Buffer
	d, err := Open("-", &buf)
	if err != nil || !d.Stdout {
		t.Fatalf("-: %v %v", d, err)
	}
	write(t, d, "x")
	if buf.String() != "x" {
		t.Errorf("- wrote %q", buf.String())
	}

	// stdout redirected to a file: that file, and links to it, are stdout.
	dir := t.TempDir()
	out, _ := os.Create(filepath.Join(dir, "out"))
	defer out.Close()
	link := filepath.Join(dir, "link")
	os.Symlink("out", link)
	for _, p := range []string{out.Name(), link} {
		if d, err := Open(p, out); err != nil || !d.Stdout {
			t.Errorf("%s: not taken for stdout (%v)", p, err)
		}
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, nil, 0o644)
	if d, _ := Open(other, out); d.Stdout {
		t.Errorf("another file taken for stdout")
	} else {
		d.Abort()
	}

	// stdout a pipe: its /proc/self/fd name is stdout.
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	if d, err := Open(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), w); err != nil || !d.Stdout {
		t.Errorf("pipe: not taken for stdout (%v)", err)
	}
	if s := staging(t, dir); len(s) != 0 {
		t.Errorf("staging left: %v", s)
	}
}

func TestCopyChecksTheSize(t *testing.T) {
	var b bytes.Buffer
	if n, err := Copy(&b, strings.NewReader("12345"), 5); n != 5 || err != nil {
		t.Errorf("exact: %d %v", n, err)
	}
	if _, err := Copy(&b, strings.NewReader("123"), -1); err != nil {
		t.Errorf("unknown size: %v", err)
	}
	var short *ShortError
	if _, err := Copy(&b, strings.NewReader("123"), 5); !errors.As(err, &short) || short.Got != 3 || short.Want != 5 {
		t.Errorf("short: %v", err)
	}
}

// TestCutConnection streams a real HTTP response that stops half way and
// checks that the file being replaced survives untouched.
func TestCutConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: application/octet-stream\r\n\r\n%s", strings.Repeat("n", 500))
		buf.Flush()
	}))
	defer srv.Close()

	dir := t.TempDir()
	dst := filepath.Join(dir, "kept")
	os.WriteFile(dst, []byte("the old file"), 0o644)
	d, err := Open(dst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = Copy(d, bufio.NewReader(resp.Body), resp.ContentLength)
	var short *ShortError
	if !errors.As(err, &short) || short.Got != 500 || short.Want != 1000 {
		t.Fatalf("want a short transfer, got %v", err)
	}
	d.Abort()
	if got := mustRead(t, dst); got != "the old file" {
		t.Errorf("old file changed: %q", got)
	}
	if s := staging(t, dir); len(s) != 0 {
		t.Errorf("staging left: %v", s)
	}
}
