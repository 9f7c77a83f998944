package file_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// brokenExecd stands in for a lifecycle server and an execd whose
// downloads go wrong in ways a healthy server never shows: the connection
// cut half way ("cut"), or the body stalled half way until the client
// leaves ("stall"; halfSent is closed once the first half is out).
type brokenExecd struct {
	*httptest.Server
	halfSent chan struct{}
}

func newBrokenExecd(t *testing.T) *brokenExecd {
	b := &brokenExecd{halfSent: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"endpoint": r.Host + "/execd", "headers": map[string]string{}})
	})
	mux.HandleFunc("GET /execd/files/download", func(w http.ResponseWriter, r *http.Request) {
		half := strings.Repeat("n", 500)
		switch r.URL.Query().Get("path") {
		case "cut":
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n%s", half)
			buf.Flush()
			conn.Close()
		case "stall":
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte(half))
			http.NewResponseController(w).Flush()
			close(b.halfSent)
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	})
	b.Server = httptest.NewServer(mux)
	t.Cleanup(b.Close)
	return b
}

func (b *brokenExecd) env(t *testing.T) *cmdtest.Env {
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = b.URL
	return env
}

// existing makes a local file a failed download must leave alone.
func existing(t *testing.T) (dir, path string) {
	dir = t.TempDir()
	path = filepath.Join(dir, "keep.bin")
	if err := os.WriteFile(path, []byte("old\x00content"), 0o640); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

func expectKept(t *testing.T, dir, path string) {
	t.Helper()
	if got := readLocal(t, path); got != "old\x00content" {
		t.Errorf("the existing file changed: %q", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the existing file's mode changed: %v, %v", fi, err)
	}
	noStaging(t, dir)
}

func TestDownloadReplacesOnlyOnSuccess(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	dir, path := existing(t)

	r := env.Run("file", "download", id, "/workspace/missing", path)
	r.ExpectError(t, 4, "file not found")
	expectKept(t, dir, path)

	env.Must("file", "write", id, "/workspace/new", "-c", "new content")
	if out := env.Must("file", "download", id, "/workspace/new", path); out != "OK: Downloaded: /workspace/new → "+path+"\n" {
		t.Errorf("download said %q", out)
	}
	if got := readLocal(t, path); got != "new content" {
		t.Errorf("not replaced: %q", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("replaced file lost its mode: %v, %v", fi, err)
	}
	noStaging(t, dir)
}

// An existing directory receives the file under its remote name, as cp
// does, with or without a trailing slash; the progress bar (on a terminal)
// is gone from the line before the result is printed.
func TestDownloadIntoDirectory(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	env.Must("file", "write", id, "/workspace/report.txt", "-c", "results")
	dir := t.TempDir()
	for _, dest := range []string{dir, dir + "/"} {
		want := filepath.Join(dir, "report.txt")
		out := env.Must("file", "download", id, "/workspace/report.txt", dest)
		if out != "OK: Downloaded: /workspace/report.txt → "+want+"\n" {
			t.Errorf("download to %s said %q", dest, out)
		}
		if got := readLocal(t, want); got != "results" {
			t.Errorf("saved %q", got)
		}
		os.Remove(want)
	}
	env.TTY = true
	r := env.Run("file", "download", id, "/workspace/report.txt", dir)
	if r.Code != 0 || !strings.HasSuffix(r.Stdout, "Downloaded: /workspace/report.txt → "+filepath.Join(dir, "report.txt")+"\n") {
		t.Fatalf("on a terminal: %+v", r)
	}
	if last := r.Stderr[strings.LastIndex(r.Stderr, "\r")+1:]; strings.TrimSpace(last) != "" {
		t.Errorf("the progress bar stays on the line: %q", r.Stderr)
	}
	noStaging(t, dir)
}

func TestDownloadCutHalfWay(t *testing.T) {
	t.Parallel()
	b := newBrokenExecd(t)
	dir, path := existing(t)
	r := b.env(t).Run("file", "download", "sb-1", "cut", path)
	r.ExpectError(t, 1, "download of cut failed: the connection ended after 500 of 1000 bytes")
	expectKept(t, dir, path)
}

func TestDownloadInterrupted(t *testing.T) {
	t.Parallel()
	b := newBrokenExecd(t)
	dir, path := existing(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan cmdtest.Result)
	env := b.env(t)
	go func() { done <- env.RunContext(ctx, strings.NewReader(""), "file", "download", "sb-1", "stall", path) }()
	<-b.halfSent
	cancel() // what Ctrl-C does to the command's context
	r := <-done
	if r.Code != 130 || r.Stdout != "" || r.Stderr != "Aborted.\n" {
		t.Errorf("interrupted download: %+v", r)
	}
	expectKept(t, dir, path)
}

func TestDownloadRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	// The server is unreachable: a refusal must come before trying it.
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "127.0.0.1:1"
	dir := t.TempDir()
	env.Run("file", "download", "sb-1", "/x", dir+"/none/").ExpectError(t, 2, "cannot download to '"+dir+"/none/': "+dir+"/none/: no such directory")
	env.Run("file", "download", "sb-1", "/", dir).ExpectError(t, 2, "the remote path names no file to save in it")

	ro := filepath.Join(dir, "read-only")
	if err := os.WriteFile(ro, []byte("keep"), 0o444); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := exec.Command("chattr", "+i", ro).Run(); err != nil {
			t.Skipf("root without chattr +i: %v", err)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", ro).Run() })
	}
	env.Run("file", "download", "sb-1", "/x", ro).ExpectError(t, 2, "cannot download to '"+ro+"'")
	if got := readLocal(t, ro); got != "keep" {
		t.Errorf("read-only file changed: %q", got)
	}
	noStaging(t, dir)
}

// asOsb runs this test binary as osb in a real process with stdout as given.
func asOsb(t *testing.T, env *cmdtest.Env, stdout *os.File, args ...string) (code int, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// GORACE: under -race a process otherwise sleeps 1 s before exiting.
	cmd.Env = append(os.Environ(), "OSB_TEST_AS_OSB=1", "GORACE=atexit_sleep_ms=0", "HOME="+env.Home,
		"OPEN_SANDBOX_DOMAIN="+env.Server.Addr(), "OPEN_SANDBOX_API_KEY="+servertest.APIKey)
	cmd.Dir = t.TempDir()
	var errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &errBuf
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), errBuf.String()
	} else if err != nil {
		t.Fatal(err)
	}
	noStaging(t, cmd.Dir)
	return 0, errBuf.String()
}

// TestDownloadToStdout runs osb as a process whose stdout is a pipe, a
// file, or a file opened for appending: every name for stdout gets the
// bytes alone, in every format, and nothing else is printed.
func TestDownloadToStdout(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	payload := "payload\x00\xff"
	env.RunStdin(payload, "file", "write", id, "/tmp/p")
	env.Must("file", "write", id, "/tmp/empty", "-c", "")
	links := t.TempDir()
	link := filepath.Join(links, "out")
	if err := os.Symlink("/dev/stdout", link); err != nil {
		t.Fatal(err)
	}

	for _, kind := range []string{"pipe", "file", "append"} {
		for _, dest := range []string{"/dev/stdout", "/dev/fd/1", link, "-", "SELF"} {
			if kind == "pipe" && dest == "SELF" {
				continue // a pipe has no path
			}
			for _, format := range formats {
				t.Run(fmt.Sprintf("%s/%s/%s", kind, filepath.Base(dest), format), func(t *testing.T) {
					t.Parallel()
					out, read := stdoutOf(t, kind)
					d := dest
					if d == "SELF" {
						d = out.Name()
					}
					code, stderr := asOsb(t, env, out, "file", "download", id, "/tmp/p", d, "-o", format)
					if got := read(); code != 0 || got != payload || stderr != "" {
						t.Errorf("exit %d, stdout %q, stderr %q", code, got, stderr)
					}
				})
			}
		}
	}
	out, read := stdoutOf(t, "pipe")
	if code, stderr := asOsb(t, env, out, "file", "download", id, "/tmp/empty", "/dev/stdout"); code != 0 || read() != "" || stderr != "" {
		t.Errorf("empty file: exit %d, stderr %q", code, stderr)
	}
	out, read = stdoutOf(t, "pipe")
	code, stderr := asOsb(t, env, out, "file", "download", id, "/tmp/missing", "/dev/stdout")
	if got := read(); code != 4 || got != "" || !strings.HasPrefix(stderr, "Error: file not found") {
		t.Errorf("missing file: exit %d, stdout %q, stderr %q", code, got, stderr)
	}
}

// stdoutOf returns a stdout for a child process of the given kind and a
// function that reads what the child wrote there.
func stdoutOf(t *testing.T, kind string) (*os.File, func() string) {
	t.Helper()
	if kind == "pipe" {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			var b bytes.Buffer
			b.ReadFrom(r)
			r.Close()
			got <- b.String()
		}()
		t.Cleanup(func() { w.Close() })
		return w, func() string { w.Close(); return <-got }
	}
	p := filepath.Join(t.TempDir(), "stdout")
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	prefix := ""
	if kind == "append" {
		prefix = "before|"
		if err := os.WriteFile(p, []byte(prefix), 0o644); err != nil {
			t.Fatal(err)
		}
		flags = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(p, flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, func() string {
		got := readLocal(t, p)
		if !strings.HasPrefix(got, prefix) {
			t.Errorf("what stdout held before was overwritten: %q", got)
		}
		return strings.TrimPrefix(got, prefix)
	}
}

// TestCtrlCDuringDownloadToStdout interrupts a real osb process half way
// through a download to its stdout: the bytes already written stay, osb
// says "Aborted." and exits 130.
func TestCtrlCDuringDownloadToStdout(t *testing.T) {
	t.Parallel()
	b := newBrokenExecd(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "file", "download", "sb-1", "stall", "/dev/stdout")
	cmd.Env = append(os.Environ(), "OSB_TEST_AS_OSB=1", "GORACE=atexit_sleep_ms=0", "HOME="+t.TempDir(), "OPEN_SANDBOX_DOMAIN="+b.URL)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	half := make([]byte, 500)
	if _, err := io.ReadFull(r, half); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(os.Interrupt)
	rest, _ := io.ReadAll(r)
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || stderr.String() != "Aborted.\n" || len(rest) != 0 {
		t.Errorf("exit %d (%v), stderr %q, %d more bytes", code, err, stderr.String(), len(rest))
	}
}
