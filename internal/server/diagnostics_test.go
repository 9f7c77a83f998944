//go:build linux

package server_test

import (
	"fmt"
	"os"
	"path/filepath"
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
		content, _ := m["content"].(string)
		return unstamped(content) == "out-line\nerr-line\n"
	}) {
		t.Fatal("the entrypoint's output never showed up")
	}
	return id
}

// unstamped is log text without the time that starts each line, as
// Docker stamps container output; a line without one shows as "UNSTAMPED".
func unstamped(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		stamp, rest, ok := strings.Cut(line, " ")
		if _, err := time.Parse(time.RFC3339Nano, stamp); !ok || err != nil || len(stamp) != len("2006-01-02T15:04:05.000000000Z") {
			b.WriteString("UNSTAMPED " + line)
			continue
		}
		b.WriteString(rest)
	}
	return b.String()
}

func TestScopedDiagnostics(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := loggingSandbox(t, c)
	r := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/logs?scope=container", nil))
	m := r.json(t)
	want := map[string]any{"sandboxId": id, "kind": "logs", "scope": "container", "delivery": "inline",
		"contentType": "text/plain; charset=utf-8", "truncated": false}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if content := m["content"].(string); unstamped(content) != "out-line\nerr-line\n" || m["contentLength"] != float64(len(content)) {
		t.Errorf("content %q, contentLength %v", content, m["contentLength"])
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
	content := events["content"].(string)
	// The real server's Docker layout, then one Event line per event.
	if want := "Container:  " + id[:12] + " (sandbox-" + id + ")\nStatus:     running\nCreated:    "; !strings.HasPrefix(content, want) {
		t.Errorf("events do not start with %q:\n%s", want, content)
	}
	var reasons []string
	for _, line := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		rest, ok := strings.CutPrefix(line, "Event:      ")
		if !ok {
			continue
		}
		// <time> <Reason>[: message]
		fields := strings.SplitN(rest, " ", 3)
		if _, err := time.Parse(time.RFC3339Nano, fields[0]); err != nil || len(fields) < 2 {
			t.Fatalf("event line %q", line)
		}
		reasons = append(reasons, strings.TrimSuffix(fields[1], ":"))
	}
	if got := strings.Join(reasons, ","); got != "Paused,Resumed,Renewed,SnapshotCreating,SnapshotReady" {
		t.Errorf("events %s\n%s", got, content)
	}
	all := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/events?scope=all", nil)).json(t)
	if all["content"] != content || fmt.Sprint(all["warnings"]) != "[The current backend only contributes runtime events to the all scope.]" {
		t.Errorf("events all %v %v", all["content"], all["warnings"])
	}
	logsAll := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/logs?scope=all", nil)).json(t)["content"].(string)
	if !strings.HasPrefix(logsAll, "== container output ==\n") || !strings.Contains(logsAll, "Z err-line\n== lifecycle events ==\n") || !strings.Contains(logsAll, "Paused") {
		t.Errorf("logs all:\n%s", logsAll)
	}

	for _, path := range []string{"/logs?scope=runtime", "/logs?scope=", "/events?scope=container", "/events?scope=network"} {
		if r := c.expect(400, c.do("GET", "/sandboxes/"+id+"/diagnostics"+path, nil)); r.code() != "DIAGNOSTICS_SCOPE_UNSUPPORTED" ||
			!strings.Contains(string(r.body), "diagnostics scope '") {
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
	if got := unstamped(text("/logs", true)); got != "out-line\nerr-line\n" {
		t.Errorf("logs %q", got)
	}
	if got := unstamped(text("/logs?tail=1", true)); got != "err-line\n" {
		t.Errorf("logs tail=1 %q", got)
	}
	if got := unstamped(text("/logs?since=1h", true)); got != "out-line\nerr-line\n" {
		t.Errorf("logs since=1h %q", got)
	}
	sb, _ := c.srv.Sandbox(id)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(sb.LogPath(), old, old)
	if got := text("/logs?since=10m", true); got != "" {
		t.Errorf("logs since=10m of output an hour old: %q", got)
	}
	c.expect(202, c.do("POST", base[:len(base)-len("/diagnostics")]+"/pause", nil))
	c.expect(202, c.do("POST", base[:len(base)-len("/diagnostics")]+"/resume", nil))
	if got := text("/events?limit=1", true); strings.Count(got, "Event:") != 1 || !strings.Contains(got, "Resumed") {
		t.Errorf("events limit=1 %q", got)
	}
	if got := text("/events", true); !strings.Contains(got, "Status:     running\n") || !strings.Contains(got, " Paused\n") {
		t.Errorf("events %q", got)
	}
	inspect := text("/inspect", false)
	for _, want := range []string{"Container ID:   " + id[:12] + "\n", "Status:         running\n", "Running:        True\n",
		"Sandbox:        " + id + "\n", "State:          Running\n", "Source:         image python:3.11\n", "Expires:        "} {
		if !strings.Contains(inspect, want) {
			t.Errorf("inspect lacks %q:\n%s", want, inspect)
		}
	}
	summary := text("/summary?tail=1&event_limit=1", false)
	rule := strings.Repeat("-", 40)
	for _, want := range []string{"SANDBOX DIAGNOSTICS SUMMARY\nSandbox ID: " + id, "INSPECT\n" + rule + "\nContainer ID:", "\nEVENTS\n" + rule + "\nContainer:",
		"LOGS (last 1 lines)\n" + rule + "\n20", "Z err-line\n"} {
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

// A sandbox whose entrypoint ends shows it as the real server shows an
// exited container: Terminated after exit 0, Failed with the code
// otherwise, in its status, its events and inspect, and its data plane
// answers no more.
func TestEntrypointExitShows(t *testing.T) {
	t.Parallel()
	clients := map[string]func(*testing.T) *client{
		"plain":    func(t *testing.T) *client { return newClient(t, servertest.NoIsolation) },
		"isolated": isolatedClient,
	}
	for name, newC := range clients {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newC(t)
			cases := []struct {
				entrypoint         []string
				state, reason, msg string
				event              string
			}{
				{[]string{"sh", "-c", "echo giving-up >&2; exit 3"}, "Failed", "CONTAINER_EXITED_ERROR", "Sandbox container exited with code 3.", "Event:      Exited with code 3\n"},
				{[]string{"true"}, "Terminated", "CONTAINER_EXITED", "Sandbox container exited successfully.", ""},
				{[]string{"no-such-program-osb"}, "Failed", "CONTAINER_EXITED_ERROR", "Sandbox container exited with code 127.", "Event:      Exited with code 127\n"},
			}
			for _, tc := range cases {
				id := c.create(map[string]any{"entrypoint": tc.entrypoint})
				var status map[string]any
				if !eventually(t, 30*time.Second, func() bool {
					status = c.expect(200, c.do("GET", c.base+"/sandboxes/"+id, nil)).json(t)["status"].(map[string]any)
					return status["state"] != "Running"
				}) {
					t.Fatalf("%v: the sandbox still runs", tc.entrypoint)
				}
				if status["state"] != tc.state || status["reason"] != tc.reason || status["message"] != tc.msg {
					t.Errorf("%v: status %v", tc.entrypoint, status)
				}
				list := c.expect(200, c.do("GET", c.base+"/sandboxes?state="+tc.state, nil)).json(t)
				if items := list["items"].([]any); len(items) == 0 {
					t.Errorf("%v: listing state %s finds nothing", tc.entrypoint, tc.state)
				}
				events := c.expect(200, c.do("GET", c.base+"/sandboxes/"+id+"/diagnostics/events?scope=runtime", nil)).json(t)["content"].(string)
				if !strings.Contains(events, "Status:     exited\n") || !strings.Contains(events, "Finished:   ") || !strings.HasSuffix(events, tc.event) {
					t.Errorf("%v: events\n%s", tc.entrypoint, events)
				}
				r := c.expect(409, c.do("GET", c.srv.URL()+"/sandboxes/"+id+"/proxy/44772/ping", nil))
				if r.code() != "DOCKER::SANDBOX_NOT_RUNNING" || !strings.Contains(string(r.body), "entrypoint exited") {
					t.Errorf("%v: data plane answered %s", tc.entrypoint, r.body)
				}
				if r := c.expect(409, c.do("POST", c.base+"/sandboxes/"+id+"/pause", nil)); !strings.Contains(string(r.body), "Sandbox is not in a running state.") {
					t.Errorf("%v: pause answered %s", tc.entrypoint, r.body)
				}
				c.expect(204, c.do("DELETE", c.base+"/sandboxes/"+id, nil))
			}
		})
	}
}

// A container's execd dies with its entrypoint, so the data plane refuses
// from the moment the entrypoint's end is written, not a while later: a
// ping just before the end must not keep the sandbox looking alive.
func TestDataPlaneRefusesOnceTheEntrypointEnds(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := c.create(map[string]any{"entrypoint": []string{"sh", "-c", "sleep 0.5; exit 4"}})
	ping := c.srv.URL() + "/sandboxes/" + id + "/proxy/44772/ping"
	exitFile := filepath.Join(c.srv.DataDir(), "sandboxes", id, "entrypoint.exit")
	// Ping until the end is on disk: each ping that still got through was
	// answered before the end was written.
	ended := func() bool {
		b, err := os.ReadFile(exitFile)
		return err == nil && strings.HasSuffix(string(b), "\n")
	}
	deadline := time.Now().Add(30 * time.Second)
	for r := c.do("GET", ping, nil); r.status == 200 && !ended(); r = c.do("GET", ping, nil) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30s", exitFile)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r := c.expect(409, c.do("GET", ping, nil)); !strings.Contains(string(r.body), "entrypoint exited with code 4") {
		t.Errorf("ping answered %s", r.body)
	}
}
