package faults

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// A download that stalls after 4 KB ends with exit 5 once the idle timeout
// passes, and leaves the destination as it was.
func TestDownloadThatStalls(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("GET /sb/{id}/files/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(1<<20))
		w.WriteHeader(200)
		w.Write(make([]byte, 4<<10))
		http.NewResponseController(w).Flush()
		f.hold(r)
	})
	dir := t.TempDir()
	dest := filepath.Join(dir, "report.bin")
	os.WriteFile(dest, []byte("the old report"), 0o640)
	r := f.env().Run("--idle-timeout", "1", "file", "download", "sb-1", "/workspace/report.bin", dest)
	expect(t, r, 5, "Error: download of /workspace/report.bin failed: GET http://"+f.addr()+"/sb/sb-1/files/download timed out: nothing received for 1s")
	oneLine(t, r)
	if b, _ := os.ReadFile(dest); string(b) != "the old report" {
		t.Errorf("the destination was changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries left in the directory", len(entries))
	}
	// file cat, the same read to stdout.
	r = f.env().Run("--idle-timeout", "1", "file", "cat", "sb-1", "/workspace/report.bin")
	expect(t, r, 5, "timed out: nothing received for 1s")
}

// An execution stream that goes silent (no output, no ping) ends once the
// idle timeout passes: osb's own failure, 125, with what it printed kept.
func TestStreamThatStalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		route string
		args  []string
	}{
		{"/sb/sb-1/command", []string{"command", "run", "sb-1", "--", "make"}},
		{"/sb/sb-1/session/s-1/run", []string{"command", "session", "run", "sb-1", "s-1", "--", "make"}},
	} {
		f := newFake(t)
		f.handle("POST "+tc.route, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			streamStart(w)
			event(w, map[string]any{"type": "init", "text": "exec-1"})
			event(w, map[string]any{"type": "stdout", "text": "building"})
			f.hold(r)
		})
		r := f.env().Run(append([]string{"--idle-timeout", "1"}, tc.args...)...)
		expect(t, r, 125, "Error: POST http://"+f.addr()+tc.route+" timed out: nothing received for 1s")
		if r.Stdout != "building\n" || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%s: stdout %q stderr %q", tc.route, r.Stdout, r.Stderr)
		}
	}
}

// An upload the server stops taking (it reads a little, then nothing) ends
// once the idle timeout passes, with exit 5.
func TestUploadThatStalls(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /sb/{id}/files/upload", func(w http.ResponseWriter, r *http.Request) {
		io.CopyN(io.Discard, r.Body, 64<<10)
		f.hold(r)
	})
	src := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(src, make([]byte, 64<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	r := f.env().Run("--idle-timeout", "1", "file", "upload", "sb-1", src, "/workspace/big.bin")
	expect(t, r, 5, "POST http://"+f.addr()+"/sb/sb-1/files/upload timed out: nothing received for 1s")
	oneLine(t, r)
}

// The idle timeout is about the server's silence, not the length of the
// exchange: a stream that keeps sending pings for longer than it is fine.
// The pings come ten times as often as the timeout. A loaded machine may
// still hold this test's server back longer than the timeout (the stream
// is then rightly cut): the timeout doubles and the stream is sent again.
// An osb that counts the stream's length rather than its silence is cut at
// every size.
func TestSlowButAliveStreamIsNotCut(t *testing.T) {
	t.Parallel()
	for idle := 2; ; idle *= 2 {
		r := slowButAliveStream(t, idle)
		if r.Code == 0 && r.Stdout == "half way\n" && r.Stderr == "" {
			return
		}
		if idle >= 16 || !strings.Contains(r.Stderr, fmt.Sprintf("nothing received for %ds", idle)) {
			t.Fatalf("--idle-timeout %d: exit %d stdout %q stderr %q", idle, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// slowButAliveStream runs a command whose stream lasts one and a half
// idle timeouts, a ping every tenth of one.
func slowButAliveStream(t *testing.T, idle int) cmdtest.Result {
	f := newFake(t)
	f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		streamStart(w)
		event(w, map[string]any{"type": "init", "text": "exec-1"})
		for i := range 15 {
			select {
			case <-r.Context().Done():
				return
			case <-tick(idle * 100):
			}
			event(w, map[string]any{"type": "ping", "text": "pong"})
			if i == 7 {
				event(w, map[string]any{"type": "stdout", "text": "half way"})
			}
		}
		event(w, map[string]any{"type": "execution_complete", "execution_time": 3000})
	})
	return f.env().Run("--idle-timeout", fmt.Sprint(idle), "command", "run", "sb-1", "--", "make")
}

func tick(ms int) <-chan time.Time { return time.After(time.Duration(ms) * time.Millisecond) }

// commandUntilStopped serves a command that prints a line and goes on
// (pinging) until osb asks to stop it, then ends its stream as execd does
// for a command killed by SIGTERM; with hold, the stream then stays open.
func commandUntilStopped(f *fake, hold bool) {
	stopped := make(chan struct{})
	f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		streamStart(w)
		event(w, map[string]any{"type": "init", "text": "exec-1"})
		event(w, map[string]any{"type": "stdout", "text": "started"})
		for {
			select {
			case <-r.Context().Done():
				return
			case <-stopped:
				event(w, map[string]any{"type": "error", "error": map[string]any{"ename": "CommandExecError", "evalue": "-1", "traceback": []string{"signal: terminated"}}})
				if hold {
					f.hold(r)
				}
				return
			case <-tick(200):
				event(w, map[string]any{"type": "ping", "text": "pong"})
			}
		}
	})
	f.handle("DELETE /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("id") == "exec-1" {
			close(stopped)
		}
	})
}
