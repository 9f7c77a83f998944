package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// expect checks the exit code and that stderr holds each wanted piece, on
// one line.
func expect(t *testing.T, r cmdtest.Result, code int, want ...string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.Code, code, r.Stdout, r.Stderr)
	}
	if len(want) == 0 {
		return
	}
	for line := range strings.Lines(r.Stderr) {
		if containsAll(line, want) {
			return
		}
	}
	t.Errorf("no stderr line holds all of %q:\n%s", want, r.Stderr)
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// Every error body shape real servers and proxies send ends in one line
// naming what went wrong, and the exit code its status stands for.
func TestErrorBodyShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		code        int
		want        []string
	}{
		{"code and message", 404, "application/json",
			`{"code":"DOCKER::SANDBOX_NOT_FOUND","message":"Sandbox sb-1 not found."}`,
			4, []string{"Error: Sandbox sb-1 not found.", "HTTP 404", "code DOCKER::SANDBOX_NOT_FOUND", "request id req-42"}},
		{"validation detail", 422, "application/json",
			`{"detail":[{"type":"greater_than_equal","loc":["body","timeout"],"msg":"Input should be greater than or equal to 60","input":5}]}`,
			1, []string{"Error: body.timeout: Input should be greater than or equal to 60", "HTTP 422"}},
		{"error key", 401, "application/json",
			`{"error":"Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN"}`,
			3, []string{"Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN", "HTTP 401", "check the API key"}},
		{"detail text", 404, "application/json", `{"detail":"Not Found"}`,
			4, []string{"Error: Not Found (HTTP 404, request id req-42)"}},
		{"html from a proxy", 502, "text/html",
			"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
			1, []string{"Error: Bad Gateway (the server sent a non-JSON response)", "HTTP 502"}},
		{"plain text", 500, "text/plain",
			"upstream connect error or disconnect/reset before headers\nsecond line",
			1, []string{"Error: upstream connect error or disconnect/reset before headers", "HTTP 500"}},
		{"empty body", 403, "", "", 3, []string{"Error: Forbidden", "HTTP 403"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			r := f.env().Run("sandbox", "get", "sb-1")
			expect(t, r, tc.code, tc.want...)
			// A GET is retried on 502 (a few times, then the error shows).
			if sent := f.count("GET /v1/sandboxes/sb-1"); (tc.status == 502) != (sent > 1) {
				t.Errorf("GET sent %d times on %d", sent, tc.status)
			}
			if n := strings.Count(r.Stderr, "\n"); n != 1 || r.Stdout != "" {
				t.Errorf("want one line on stderr and nothing on stdout, got stdout %q stderr %q", r.Stdout, r.Stderr)
			}
		})
	}
}

// Under -o json the same failure is one object on stderr, stdout empty.
func TestErrorAsJSON(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 404, map[string]string{"code": "DOCKER::SANDBOX_NOT_FOUND", "message": "Sandbox sb-1 not found."})
	})
	r := f.env().Run("sandbox", "get", "sb-1", "-o", "json")
	if r.Code != 4 || r.Stdout != "" {
		t.Fatalf("exit %d stdout %q", r.Code, r.Stdout)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.Stderr), &obj); err != nil {
		t.Fatalf("stderr is not one JSON object: %v\n%s", err, r.Stderr)
	}
	for k, want := range map[string]any{"status": "error", "exit_code": 4.0, "http_status": 404.0,
		"code": "DOCKER::SANDBOX_NOT_FOUND", "request_id": "req-42"} {
		if obj[k] != want {
			t.Errorf("%s = %v, want %v", k, obj[k], want)
		}
	}
}

// A safe request is retried after 429 and succeeds; a request that creates
// or changes something is sent exactly once.
func TestRetryOnlyIdempotentRequests(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	var mu sync.Mutex
	busy := map[string]int{}
	tooMany := func(key string, times int, then http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			refuse := busy[key] < times
			busy[key]++
			mu.Unlock()
			if refuse {
				w.Header().Set("Retry-After", "0")
				writeJSON(w, 429, map[string]string{"code": "TOO_MANY_REQUESTS", "message": "Slow down."})
				return
			}
			then(w, r)
		}
	}
	f.handle("GET /v1/sandboxes/{id}", tooMany("get", 1, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": r.PathValue("id"), "status": map[string]string{"state": "Running"},
			"createdAt": "2026-01-01T00:00:00Z", "entrypoint": []string{"tail"}})
	}))
	f.handle("DELETE /v1/sandboxes/{id}", tooMany("delete", 2, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	f.handle("POST /v1/sandboxes/{id}/pause", tooMany("pause", 1, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) }))
	f.handle("POST /v1/sandboxes", tooMany("create", 1, func(w http.ResponseWriter, r *http.Request) {
		t.Error("create was sent a second time")
	}))
	env := f.env()

	r := env.Run("sandbox", "get", "sb-1", "-o", "json")
	expect(t, r, 0)
	if n := f.count("GET /v1/sandboxes/sb-1"); n != 2 {
		t.Errorf("GET sent %d times, want 2 (one 429, one retry)", n)
	}
	expect(t, env.Run("sandbox", "kill", "sb-1"), 0)
	if n := f.count("DELETE /v1/sandboxes/sb-1"); n != 3 {
		t.Errorf("DELETE sent %d times, want 3", n)
	}
	expect(t, env.Run("sandbox", "pause", "sb-1"), 1, "Slow down.", "HTTP 429")
	if n := f.count("POST /v1/sandboxes/sb-1/pause"); n != 1 {
		t.Errorf("pause sent %d times, want 1: a POST is never retried", n)
	}
	expect(t, env.Run("sandbox", "create", "-i", "python:3.11"), 1, "Slow down.", "HTTP 429")
	if n := f.count("POST /v1/sandboxes"); n != 1 {
		t.Errorf("create sent %d times, want 1", n)
	}
	// Nothing was created, so nothing was cleaned up either.
	if n := f.count("DELETE /v1/sandboxes/sb-1"); n != 3 {
		t.Errorf("a refused create was followed by a delete")
	}
}

// A server that accepts the connection but never answers runs into
// --request-timeout: exit 5, and the request is not repeated.
func TestSlowHeadersTimeOut(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	r := f.env().Run("--request-timeout", "1", "sandbox", "get", "sb-1")
	expect(t, r, 5, "Error: ", "timed out")
	if n := f.count("GET /v1/sandboxes/sb-1"); n != 1 {
		t.Errorf("GET sent %d times, want 1", n)
	}
}

// A stream has no total limit, but the wait for its first answer has: a
// foreground command whose execd never answers ends with osb's own failure
// (125, no remote exit code known), and the command is sent once.
func TestSlowHeadersOnAStream(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
		// With the body read, the server notices when the client hangs up.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	r := f.env().Run("--request-timeout", "1", "command", "run", "sb-1", "--", "make")
	expect(t, r, 125, "Error: POST http://"+f.addr()+"/sb/sb-1/command timed out")
	if n := f.count("POST /sb/sb-1/command"); n != 1 || r.Stdout != "" {
		t.Errorf("command sent %d times (want 1), stdout %q", n, r.Stdout)
	}
}

// A connection reset before any answer: a safe request is tried again and
// succeeds; a create is sent once only (a second one could make a second
// sandbox) and ends in exit 6, with nothing cleaned up that was never made.
func TestResetBeforeAnswer(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	var mu sync.Mutex
	resets := 0
	f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := resets == 0
		resets++
		mu.Unlock()
		if first {
			reset(t, w)
			return
		}
		writeJSON(w, 200, map[string]any{"id": r.PathValue("id"), "status": map[string]string{"state": "Running"},
			"createdAt": "2026-01-01T00:00:00Z", "entrypoint": []string{"tail"}})
	})
	f.handle("POST /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) { reset(t, w) })
	env := f.env()
	r := env.Run("sandbox", "get", "sb-1", "-o", "json")
	expect(t, r, 0)
	if n := f.count("GET /v1/sandboxes/sb-1"); n != 2 {
		t.Errorf("GET sent %d times, want 2 (one reset, one retry)", n)
	}
	r = env.Run("sandbox", "create", "-i", "python:3.11")
	expect(t, r, 6, "Error: cannot reach http://"+f.addr()+"/v1/sandboxes", "connection reset by peer")
	if n := f.count("POST /v1/sandboxes"); n != 1 {
		t.Errorf("create sent %d times, want 1", n)
	}
	for _, req := range f.requests() {
		if strings.HasPrefix(req, "DELETE ") {
			t.Errorf("a failed create was followed by %s", req)
		}
	}
}

// Nothing listening: exit 6, and the message says so.
func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	addr := cmdtest.ClosedAddr(t)
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = addr
	expect(t, env.Run("sandbox", "list"), 6, "cannot reach http://"+addr, "connection refused")
	// A foreground command that cannot start reports osb's own failure.
	expect(t, env.Run("command", "run", "sb-1", "--", "true"), 125, "connection refused")
}

// An endpoint lookup that answers 200 without an address (a broken
// gateway or server) is a clear error, not a request to "http:///…".
func TestEndpointLookupWithoutAddress(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `{"endpoint": "", "headers": {}}`} {
		f := newFake(t)
		f.handle("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		})
		env := f.env()
		expect(t, env.Run("command", "run", "sb-1", "--", "echo", "hi"), 125,
			"Error: the server gave no address for port 44772 of sandbox sb-1")
		r := env.Run("file", "cat", "sb-1", "/etc/hostname")
		expect(t, r, 1, "Error: the server gave no address for port 44772 of sandbox sb-1")
		if n := strings.Count(r.Stderr, "\n"); n != 1 || r.Stdout != "" {
			t.Errorf("want one line on stderr, got stdout %q stderr %q", r.Stdout, r.Stderr)
		}
		for _, req := range f.requests() {
			if !strings.HasPrefix(req, "GET /v1/sandboxes/sb-1/endpoints/") {
				t.Errorf("%s: a request other than the lookup was sent: %s", body, req)
			}
		}
	}
}

// The lifecycle server cannot say where a sandbox's execd is: the command
// fails with the server's reason, and nothing is sent to any data plane.
func TestEndpointLookupFails(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 500, map[string]string{"code": "DOCKER::NETWORK_MODE_ENDPOINT_UNAVAILABLE", "message": "Endpoint unavailable in host network mode."})
	})
	env := f.env()
	expect(t, env.Run("command", "run", "sb-1", "--", "echo", "hi"), 125, "Endpoint unavailable in host network mode.")
	expect(t, env.Run("file", "cat", "sb-1", "/etc/hostname"), 1, "Endpoint unavailable in host network mode.", "HTTP 500")
	// A sandbox that is gone by the time of the lookup: not found, exit 4.
	f.handle("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 404, map[string]string{"code": "DOCKER::SANDBOX_NOT_FOUND", "message": "Sandbox sb-1 not found."})
	})
	expect(t, env.Run("file", "cat", "sb-1", "/etc/hostname"), 4, "Error: Sandbox sb-1 not found.", "HTTP 404")
	for _, req := range f.requests() {
		if strings.HasPrefix(strings.Fields(req)[1], "/sb/") {
			t.Errorf("a data-plane request was sent: %s", req)
		}
	}
}

// A stream cut by a reset after some output: what arrived is printed, the
// error says the stream broke, exit 125, and the command is not re-sent.
func TestResetInTheMiddleOfAStream(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
		streamStart(w)
		event(w, map[string]any{"type": "init", "text": "exec-1"})
		event(w, map[string]any{"type": "stdout", "text": "partial"})
		reset(t, w)
	})
	r := f.env().Run("command", "run", "sb-1", "--", "make")
	expect(t, r, 125, "Error: the stream from ", "/sb/sb-1/command broke off after output had arrived: connection reset by peer")
	if r.Stdout != "partial\n" {
		t.Errorf("stdout %q, want the output that arrived", r.Stdout)
	}
	if n := f.count("POST /sb/sb-1/command"); n != 1 {
		t.Errorf("the command was sent %d times, want 1", n)
	}
}

// A stream that ends without its terminal event is an error, not a success
// and not a hang, for a command and for a session run alike; nothing is
// sent again.
func TestStreamEndsWithoutTerminalEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		route string
		args  []string
		want  string
	}{
		{"/sb/sb-1/command", []string{"command", "run", "sb-1", "--", "make"}, "closed the stream before command exec-1 finished"},
		{"/sb/sb-1/session/s-1/run", []string{"command", "session", "run", "sb-1", "s-1", "--", "make"}, "closed the stream before "},
	} {
		t.Run(tc.args[1], func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.handle("POST "+tc.route, func(w http.ResponseWriter, r *http.Request) {
				streamStart(w)
				event(w, map[string]any{"type": "init", "text": "exec-1"})
				event(w, map[string]any{"type": "stdout", "text": "half"})
				event(w, map[string]any{"type": "ping", "text": "pong"})
			})
			r := f.env().Run(tc.args...)
			expect(t, r, 125, "Error: the server "+tc.want)
			if r.Stdout != "half\n" {
				t.Errorf("stdout %q, want the output and the final newline", r.Stdout)
			}
			if n := f.count("POST " + tc.route); n != 1 {
				t.Errorf("sent %d times, want 1", n)
			}
		})
	}
}

// A server that sends the terminal event and then holds the stream open
// (real execd does, for about a second; this one for as long as the client
// stays): osb returns at once with the remote exit code, rather than waiting
// for the stream to close. A hang here would stop the test run.
func TestStreamHeldOpenAfterTerminalEvent(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the hang-up ends r.Context()
		streamStart(w)
		event(w, map[string]any{"type": "init", "text": "exec-1"})
		event(w, map[string]any{"type": "stdout", "text": "done"})
		event(w, map[string]any{"type": "error", "error": map[string]any{"ename": "CommandExecError", "evalue": "3", "traceback": []string{}}})
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
				event(w, map[string]any{"type": "ping", "text": "pong"})
			}
		}
	})
	r := f.env().Run("command", "run", "sb-1", "--", "make")
	expect(t, r, 3)
	if r.Stdout != "done\n" || r.Stderr != "" {
		t.Errorf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
}

// A malformed frame is skipped; a huge one arrives whole, as one line; an
// empty line (text "\n") is one too.
func TestMalformedAndHugeFrames(t *testing.T) {
	t.Parallel()
	// 2 MiB in one frame, past any default buffer; the size itself is the
	// fault table's 200 MB frame, through the built osb (this one runs
	// in-process, under -race, where every byte decoded costs).
	huge := strings.Repeat("0123456789abcdef", 1<<17)
	f := newFake(t)
	f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
		streamStart(w)
		event(w, map[string]any{"type": "init", "text": "exec-1"})
		io.WriteString(w, "{this is not json\n\n")
		io.WriteString(w, "data: [1, 2\n\n")
		event(w, map[string]any{"type": "stdout", "text": huge})
		event(w, map[string]any{"type": "mystery", "text": "ignored"})
		event(w, map[string]any{"type": "stdout", "text": "\n"})
		event(w, map[string]any{"type": "execution_complete", "execution_time": 5})
	})
	r := f.env().Run("command", "run", "sb-1", "--", "cat", "big")
	expect(t, r, 0)
	if r.Stdout != huge+"\n\n" {
		t.Errorf("stdout has %d bytes, want %d", len(r.Stdout), len(huge)+2)
	}
	if r.Stderr != "" {
		t.Errorf("stderr: %q", r.Stderr)
	}
}

// A download that breaks off mid-body leaves the destination as it was (an
// existing file untouched, a new one never created) and no staging files.
func TestResetInTheMiddleOfADownload(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("GET /sb/{id}/files/download", func(w http.ResponseWriter, r *http.Request) {
		conn, buf := hijack(t, w)
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", 8<<20)
		buf.Write(make([]byte, 1<<20))
		buf.Flush()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	})
	env := f.env()
	dir := t.TempDir()
	existing := filepath.Join(dir, "report.bin")
	if err := os.WriteFile(existing, []byte("the old report"), 0o640); err != nil {
		t.Fatal(err)
	}
	// A reset after the answer began is not "unreachable" (6): exit 1.
	r := env.Run("file", "download", "sb-1", "/workspace/report.bin", existing)
	expect(t, r, 1, "Error: download of /workspace/report.bin failed", "connection reset by peer")
	if b, _ := os.ReadFile(existing); string(b) != "the old report" {
		t.Errorf("the existing file was changed: %d bytes", len(b))
	}
	fresh := filepath.Join(dir, "new.bin")
	expect(t, env.Run("file", "download", "sb-1", "/workspace/new.bin", fresh), 1, "download of /workspace/new.bin failed")
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "report.bin" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only report.bin", names)
	}
}
