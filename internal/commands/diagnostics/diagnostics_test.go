package diagnostics_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// newSandbox starts a local server and a sandbox whose entrypoint prints
// two lines, and waits until both are in its log.
func newSandbox(t *testing.T) (*cmdtest.Env, string) {
	t.Helper()
	env := cmdtest.New(t, servertest.NoIsolation)
	id := env.NewSandbox("--entrypoint", "sh", "--entrypoint", "-c", "--entrypoint", "echo hello; echo oops >&2; exec tail -f /dev/null")
	cmdtest.Eventually(t, "the entrypoint's output", func() bool {
		return cmdtest.Normalize(env.Must("diagnostics", "logs", id, "-s", "container"), nil) == "<TIME> hello\n<TIME> oops\n"
	})
	return env, id
}

func TestLogsAndEvents(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	ids := map[string]string{id: "<SB>", id[:12]: "<SB12>"}
	for _, format := range []string{"table", "json", "yaml"} {
		r := env.Run("diagnostics", "logs", id, "--scope", "container", "-o", format).ExpectCode(t, 0)
		cmdtest.Golden(t, "logs_"+format, cmdtest.Normalize(r.Combined(), ids))
	}
	// raw is the default; a unique prefix of the id is enough.
	if r := env.Run("diagnostics", "logs", id[:8], "-s", "container", "-o", "raw"); cmdtest.Normalize(r.Stdout, nil) != "<TIME> hello\n<TIME> oops\n" || r.Stderr != "" {
		t.Errorf("raw logs %q %q", r.Stdout, r.Stderr)
	}
	env.Must("sandbox", "pause", id)
	env.Must("sandbox", "resume", id, "--skip-health-check")
	r := env.Run("diagnostics", "events", id, "-s", "runtime").ExpectCode(t, 0)
	cmdtest.Golden(t, "events_raw", cmdtest.Normalize(r.Combined(), ids))
	var d struct {
		Kind, Scope, Content string
		ContentLength        int `json:"content_length"`
	}
	json.Unmarshal([]byte(env.Must("diagnostics", "events", id, "-s", "all", "-o", "json")), &d)
	if d.Kind != "events" || d.Scope != "all" || !strings.Contains(d.Content, "Resumed") || d.ContentLength != len(d.Content) {
		t.Errorf("events -o json %+v", d)
	}
}

func TestTruncatedLogsWarnOnStderr(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	sb, _ := env.Server.Sandbox(id)
	f, err := os.OpenFile(sb.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat(strings.Repeat("y", 63)+"\n", 20000))
	f.WriteString("the end\n")
	f.Close()
	r := env.Run("diagnostics", "logs", id, "-s", "container").ExpectCode(t, 0)
	if !strings.HasSuffix(r.Stdout, "y\nthe end\n") || len(r.Stdout) > 1<<20 {
		t.Errorf("stdout: %d bytes ending %q", len(r.Stdout), r.Stdout[max(0, len(r.Stdout)-20):])
	}
	stamp := len("2006-01-02T15:04:05.000000000Z ") // before each of the entrypoint's two lines
	size := 2*stamp + len("hello\noops\n") + 20000*64 + len("the end\n")
	want := fmt.Sprintf("WARN: diagnostic content was truncated.\nWARN: showing the last %d of %d bytes of container output\n", len(r.Stdout), size)
	if r.Stderr != want {
		t.Errorf("stderr %q, want %q", r.Stderr, want)
	}
	// Under -o json the warnings are part of the descriptor, not stderr.
	r = env.Run("diagnostics", "logs", id, "-s", "container", "-o", "json").ExpectCode(t, 0)
	if r.Stderr != "" || !strings.Contains(r.Stdout, `"truncated": true`) || !strings.Contains(r.Stdout, `"warnings": [`) {
		t.Errorf("json: stderr %q", r.Stderr)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	env.Run("diagnostics", "logs", id).ExpectError(t, 2, `required flag(s) "scope" not set`)
	env.Run("diagnostics", "logs", id, "-s", " ").ExpectError(t, 2, "--scope must not be empty")
	env.Run("diagnostics", "logs", id, "-s", "container", "-o", "xml").ExpectError(t, 2, "'xml' is not one of")
	env.Run("diagnostics", "logs", id, "-s", "network").ExpectError(t, 1, `Unsupported logs diagnostics scope 'network'. Supported scopes: container, all.`)
	env.Run("diagnostics", "events", id, "-s", "container").ExpectError(t, 1, "Unsupported events diagnostics scope 'container'. Supported scopes: runtime, all.")
	env.Run("diagnostics", "events", "nope", "-s", "runtime").ExpectError(t, 4, "Sandbox nope not found.")
}

// fakeServer answers the diagnostics routes as scripted and records the
// requests, for what the local server does not do: 501, URL delivery.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

func newFakeServer(t *testing.T, h http.HandlerFunc) (*fakeServer, *cmdtest.Env) {
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.mu.Lock()
		fs.requests = append(fs.requests, r.Method+" "+r.URL.RequestURI()+" accept="+r.Header.Get("Accept"))
		fs.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(fs.Close)
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = fs.URL
	return fs, env
}

func (fs *fakeServer) seen() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return strings.Join(fs.requests, "\n")
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

// legacyServer is the open-source server of the June snapshot: 501 for
// any scoped request, deprecated plain text without scope.
func legacyServer(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/sandboxes": // the id-prefix lookup after a 404
		writeJSON(w, 200, `{"items":[],"pagination":{"page":1,"pageSize":200,"totalItems":0,"totalPages":0,"hasNextPage":false}}`)
	case r.URL.Query().Has("scope"): // before any sandbox lookup, as on the real server
		writeJSON(w, 501, `{"code":"DIAGNOSTICS_NOT_IMPLEMENTED","message":"The stable Diagnostics API is not implemented by this OpenSandbox server."}`)
	case !strings.HasPrefix(r.URL.Path, "/v1/sandboxes/sb1/"):
		writeJSON(w, 404, `{"code":"DOCKER::SANDBOX_NOT_FOUND","message":"Sandbox not found"}`)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Deprecation", "true")
		w.Write([]byte("legacy line 1\nlegacy line 2"))
	}
}

func TestFallbackToLegacyTextOn501(t *testing.T) {
	t.Parallel()
	fs, env := newFakeServer(t, legacyServer)
	r := env.Run("diagnostics", "logs", "sb1", "-s", "container").ExpectCode(t, 0)
	if r.Stdout != "legacy line 1\nlegacy line 2\n" {
		t.Errorf("stdout %q", r.Stdout)
	}
	if r.Stderr != "WARN: the server does not implement scoped diagnostics (HTTP 501); showing its legacy unscoped logs text, so scope 'container' was not applied\n" {
		t.Errorf("stderr %q", r.Stderr)
	}
	if want := "GET /v1/sandboxes/sb1/diagnostics/logs?scope=container accept=\nGET /v1/sandboxes/sb1/diagnostics/logs accept=text/plain"; fs.seen() != want {
		t.Errorf("requests:\n%s\nwant:\n%s", fs.seen(), want)
	}
	r = env.Run("diagnostics", "events", "sb1", "-s", "runtime", "-o", "json").ExpectCode(t, 0)
	cmdtest.Golden(t, "fallback_events_json", r.Combined())
	// The legacy route answers 404 for an unknown sandbox: exit 4.
	env.Run("diagnostics", "logs", "sb2", "-s", "container").ExpectError(t, 4, "legacy logs route failed: Sandbox not found")
}

func TestDescriptorShapes(t *testing.T) {
	t.Parallel()
	fs, env := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("scope") {
		case "url":
			writeJSON(w, 200, `{"sandboxId":"sb1","kind":"logs","scope":"url","delivery":"url","contentType":"text/plain",
				"contentUrl":"https://example.com/logs.txt","contentLength":10485760,"expiresAt":"2026-04-14T10:30:00Z","truncated":true,
				"warnings":["older lines expired"],"futureField":1}`)
		case "empty":
			writeJSON(w, 200, `{"sandboxId":"sb1","kind":"logs","scope":"empty","delivery":"url","contentType":"text/plain","truncated":false}`)
		case "text":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("plain answer\n"))
		}
	})
	// Bad input is refused before any request.
	for _, args := range [][]string{{"sb1"}, {"sb1", "-s", ""}, {"sb1", "-s", "url", "-o", "xml"}, {"-s", "url"}} {
		env.Run(append([]string{"diagnostics", "logs"}, args...)...).ExpectCode(t, 2)
	}
	if seen := fs.seen(); seen != "" {
		t.Errorf("refused commands sent:\n%s", seen)
	}
	r := env.Run("diagnostics", "logs", "sb1", "-s", "url").ExpectCode(t, 0)
	if r.Stdout != "https://example.com/logs.txt\n" || r.Stderr != "WARN: diagnostic content was truncated.\nWARN: older lines expired\n" {
		t.Errorf("url delivery: %q %q", r.Stdout, r.Stderr)
	}
	for _, format := range []string{"json", "yaml", "table"} {
		cmdtest.Golden(t, "url_"+format, env.Run("diagnostics", "logs", "sb1", "-s", "url", "-o", format).ExpectCode(t, 0).Combined())
	}
	env.Run("diagnostics", "logs", "sb1", "-s", "empty").ExpectError(t, 1, "Diagnostic response did not include inline content or a content URL.")
	if r := env.Run("diagnostics", "logs", "sb1", "-s", "text").ExpectCode(t, 0); r.Stdout != "plain answer\n" {
		t.Errorf("text/plain answer: %q", r.Stdout)
	}
}
