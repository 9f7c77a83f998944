//go:build linux

package server_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server/servertest"
)

// loggingSandbox creates a sandbox whose entrypoint writes two lines, and
// waits until both are in its log.
func loggingSandbox(t *testing.T, c *client) string {
	t.Helper()
	id := c.create(map[string]any{"entrypoint": []string{"sh", "-c", "echo out-line; echo err-line >&2; exec tail -f /dev/null"}})
	if !eventually(t, 30*time.Second, func() bool {
		m := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/logs?scope=container", nil)).json(t)
		return m["content"] == "out-line\nerr-line\n"
	}) {
		t.Fatal("the entrypoint's output never showed up")
	}
	return id
}

func TestScopedDiagnostics(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := loggingSandbox(t, c)
	r := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/logs?scope=container", nil))
	m := r.json(t)
	want := map[string]any{"sandboxId": id, "kind": "logs", "scope": "container", "delivery": "inline",
		"contentType": "text/plain; charset=utf-8", "truncated": false, "contentLength": 18.0, "content": "out-line\nerr-line\n"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	for _, k := range []string{"contentUrl", "expiresAt", "warnings"} {
		if _, ok := m[k]; ok {
			t.Errorf("inline descriptor has %s", k)
		}
	}

	c.expect(202, c.do("POST", "/sandboxes/"+id+"/pause", nil))
	c.expect(202, c.do("POST", "/sandboxes/"+id+"/resume", nil))
	c.expect(200, c.do("POST", "/sandboxes/"+id+"/renew-expiration", map[string]string{"expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}))
	settledSnapshot(t, c, snapshotOf(t, c, id, nil))
	events := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/events?scope=runtime", nil)).json(t)
	var reasons []string
	for _, line := range strings.Split(strings.TrimSuffix(events["content"].(string), "\n"), "\n") {
		// <time> <Reason>[: message]
		fields := strings.SplitN(line, " ", 3)
		if _, err := time.Parse(time.RFC3339Nano, fields[0]); err != nil || len(fields) < 2 {
			t.Fatalf("event line %q", line)
		}
		reasons = append(reasons, strings.TrimSuffix(fields[1], ":"))
	}
	if got := strings.Join(reasons, ","); got != "Created,Started,Paused,Resumed,Renewed,SnapshotCreating,SnapshotReady" {
		t.Errorf("events %s\n%s", got, events["content"])
	}
	if content := events["content"].(string); !strings.Contains(content, "Created: from image python:3.11") ||
		!strings.Contains(content, "Started: entrypoint sh -c 'echo out-line; echo err-line >&2; exec tail -f /dev/null'") {
		t.Errorf("event messages:\n%s", content)
	}
	if all := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/events?scope=all", nil)).json(t); all["content"] != events["content"] {
		t.Errorf("events all %v", all["content"])
	}
	all := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/logs?scope=all", nil)).json(t)["content"].(string)
	if !strings.HasPrefix(all, "== container output ==\nout-line\nerr-line\n== lifecycle events ==\n") || !strings.Contains(all, "Paused") {
		t.Errorf("logs all:\n%s", all)
	}

	for _, path := range []string{"/logs?scope=runtime", "/logs?scope=", "/events?scope=container", "/events?scope=network"} {
		if r := c.expect(400, c.do("GET", "/sandboxes/"+id+"/diagnostics"+path, nil)); r.code() != "DIAGNOSTICS_SCOPE_UNSUPPORTED" {
			t.Errorf("%s: %s", path, r.body)
		}
	}
	c.expect(404, c.do("GET", "/sandboxes/nope/diagnostics/logs?scope=container", nil))
	c.key = ""
	c.expect(401, c.do("GET", "/sandboxes/"+id+"/diagnostics/logs?scope=container", nil))
}

func TestDiagnosticLogsTruncated(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := loggingSandbox(t, c)
	sb, _ := c.srv.Sandbox(id)
	f, err := os.OpenFile(sb.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	for range 15000 { // 1.5 MB of output
		f.WriteString(line)
	}
	f.WriteString("last line\n")
	f.Close()
	m := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/logs?scope=container", nil)).json(t)
	content := m["content"].(string)
	if m["truncated"] != true || len(content) > 1<<20 || !strings.HasPrefix(content, line) || !strings.HasSuffix(content, "last line\n") {
		t.Errorf("truncated=%v, %d bytes, starts %q", m["truncated"], len(content), content[:min(len(content), 20)])
	}
	if w := m["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), "showing the last") {
		t.Errorf("warnings %v", w)
	}
}

func TestLegacyDiagnostics(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := loggingSandbox(t, c)
	base := "/sandboxes/" + id + "/diagnostics"
	text := func(path string, deprecated bool) string {
		t.Helper()
		r := c.expect(200, c.do("GET", base+path, nil))
		if ct := r.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		if got := r.header.Get("Deprecation") == "true"; got != deprecated {
			t.Errorf("%s: Deprecation header %v", path, got)
		}
		return string(r.body)
	}
	if got := text("/logs", true); got != "out-line\nerr-line\n" {
		t.Errorf("logs %q", got)
	}
	if got := text("/logs?tail=1", true); got != "err-line\n" {
		t.Errorf("logs tail=1 %q", got)
	}
	if got := text("/logs?since=1h", true); got != "out-line\nerr-line\n" {
		t.Errorf("logs since=1h %q", got)
	}
	sb, _ := c.srv.Sandbox(id)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(sb.LogPath(), old, old)
	if got := text("/logs?since=10m", true); got != "" {
		t.Errorf("logs since=10m of output an hour old: %q", got)
	}
	if got := text("/events?limit=1", true); strings.Count(got, "\n") != 1 || !strings.Contains(got, "Started: entrypoint") {
		t.Errorf("events limit=1 %q", got)
	}
	if got := text("/events", true); !strings.Contains(got, "Created: from image") {
		t.Errorf("events %q", got)
	}
	inspect := text("/inspect", false)
	for _, want := range []string{"Sandbox:    " + id + "\n", "State:      Running\n", "Source:     image python:3.11\n", "Expires:    "} {
		if !strings.Contains(inspect, want) {
			t.Errorf("inspect lacks %q:\n%s", want, inspect)
		}
	}
	summary := text("/summary?tail=1&event_limit=1", false)
	for _, want := range []string{"Diagnostics summary of sandbox " + id, "--- Inspect ---\nSandbox:", "--- Events (last 1) ---\n", "--- Logs (last 1 lines) ---\nerr-line\n"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	for _, path := range []string{"/logs?tail=0", "/logs?tail=10001", "/events?limit=501", "/summary?event_limit=0", "/summary?tail=x"} {
		c.expect(422, c.do("GET", base+path, nil))
	}
	if r := c.expect(400, c.do("GET", base+"/logs?since=soon", nil)); !strings.Contains(string(r.body), "since") {
		t.Errorf("bad since: %s", r.body)
	}
	for _, path := range []string{"/logs", "/events", "/inspect", "/summary"} {
		c.expect(404, c.do("GET", "/sandboxes/nope/diagnostics"+path, nil))
	}
}
