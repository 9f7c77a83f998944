package interop

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// sandboxState asks the server (not a client under test) for a sandbox's
// state; "" when it does not exist.
func (h *harness) sandboxState(t *testing.T, id string) string {
	t.Helper()
	status, body := h.ours.API(http.MethodGet, "/sandboxes/"+id, nil)
	if status == http.StatusNotFound {
		return ""
	}
	var v struct{ Status struct{ State string } }
	decodeInto(t, body, &v)
	return v.Status.State
}

func TestOfficialCLISandboxLifecycle(t *testing.T) {
	h := start(t)

	t.Run("create", func(t *testing.T) {
		// A new id on each side, nothing else may differ.
		h.compare(t, twin{}, cmp{
			args: args("sandbox", "create", "-i", "python:3.11", "-t", "30m", "-e", "A=1", "-m", "suite=interop"),
			vary: map[string]string{"id": "each create makes a new sandbox"},
		})
		created := h.officialOK(t, "sandbox", "create", "-i", "python:3.11", "-m", "made-by=official", "-o", "json")
		var v struct{ ID, Status, Timeout, Image string }
		decodeInto(t, []byte(created), &v)
		if v.Status != "created" || v.Timeout != "sdk-default" || v.Image != "python:3.11" {
			t.Errorf("official create printed %s", created)
		}
		if got := h.sandboxState(t, v.ID); got != "Running" {
			t.Errorf("server says the official CLI's sandbox is %q, want Running", got)
		}
	})

	t.Run("create from file", func(t *testing.T) {
		req := filepath.Join(t.TempDir(), "request.json")
		body := `{"image":{"uri":"python:3.11"},"entrypoint":["tail","-f","/dev/null"],"resourceLimits":{"cpu":"1"},` +
			`"timeout":900,"env":{"A":"b"},"metadata":{"from":"file"}}`
		if err := os.WriteFile(req, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		h.compare(t, twin{}, cmp{args: args("sandbox", "create", "-f", req),
			vary: map[string]string{"id": "each create makes a new sandbox"}})
	})

	id := h.sandbox(t, map[string]any{"metadata": map[string]string{"suite": "lifecycle"}})
	t.Run("get", func(t *testing.T) { h.same(t, id, cmp{args: args("sandbox", "get", "ID")}) })
	t.Run("list", func(t *testing.T) {
		h.same(t, id, cmp{args: args("sandbox", "list", "-m", "suite=lifecycle", "-s", "running")})
	})
	t.Run("endpoint", func(t *testing.T) {
		h.same(t, id, cmp{args: args("sandbox", "endpoint", "ID", "--port", "44772")})
	})
	t.Run("health", func(t *testing.T) { h.same(t, id, cmp{args: args("sandbox", "health", "ID")}) })
	t.Run("metrics", func(t *testing.T) {
		h.same(t, id, cmp{args: args("sandbox", "metrics", "ID"), vary: map[string]string{
			"cpu_used_percentage": "sampled live", "memory_used_in_mib": "sampled live",
			"memory_total_in_mib": "sampled live", "timestamp": "sampled live",
		}})
	})
	t.Run("renew", func(t *testing.T) {
		// The new expiry is computed from each client's clock, and ours prints
		// it in RFC 3339 (a documented improvement over Python's str()).
		h.same(t, id, cmp{args: args("sandbox", "renew", "ID", "--timeout", "45m"),
			vary: map[string]string{"expires_at": "now + 45m by each client's clock"}})
	})

	t.Run("diagnostics", func(t *testing.T) {
		h.same(t, id, cmp{args: args("diagnostics", "logs", "ID", "--scope", "container")})
		h.same(t, id, cmp{args: args("diagnostics", "events", "ID", "--scope", "runtime")})
	})

	tw := h.twins(t, nil)
	t.Run("pause", func(t *testing.T) {
		h.compare(t, tw, cmp{args: args("sandbox", "pause", "ID"), label: "<SANDBOX>"})
		for _, id := range tw {
			if got := h.sandboxState(t, id); got != "Paused" {
				t.Errorf("after pause the server says %s is %q", id, got)
			}
		}
	})
	t.Run("resume", func(t *testing.T) {
		h.compare(t, tw, cmp{args: args("sandbox", "resume", "ID"), label: "<SANDBOX>"})
		for _, id := range tw {
			if got := h.sandboxState(t, id); got != "Running" {
				t.Errorf("after resume the server says %s is %q", id, got)
			}
		}
	})
	t.Run("kill", func(t *testing.T) {
		h.compare(t, tw, cmp{args: args("sandbox", "kill", "ID"), label: "<SANDBOX>"})
		pairs := [2]twin{h.twins(t, nil), h.twins(t, nil)}
		h.compare(t, twin{pairs[0][0], pairs[0][1]}, cmp{label: "<FIRST>", also: map[string]twin{"<SECOND>": {pairs[1][0], pairs[1][1]}},
			args: func(first string) []string {
				second := pairs[1][0]
				if first == pairs[0][1] {
					second = pairs[1][1]
				}
				return []string{"sandbox", "kill", first, second}
			}})
		for _, id := range append(tw[:], pairs[0][0], pairs[0][1], pairs[1][0], pairs[1][1]) {
			if got := h.sandboxState(t, id); got != "" {
				t.Errorf("after kill the server still has %s (%s)", id, got)
			}
		}
	})
}

// Manual cleanup: `--timeout none` sends a null timeout, and the sandbox
// then has no expiry.
func TestOfficialCLIManualCleanup(t *testing.T) {
	h := start(t)
	h.compare(t, twin{}, cmp{
		args: args("sandbox", "create", "-i", "python:3.11", "--timeout", "none"),
		vary: map[string]string{"id": "each create makes a new sandbox"},
	})
	out := h.officialOK(t, "sandbox", "list", "-o", "json")
	var list struct {
		Items []map[string]json.RawMessage
	}
	decodeInto(t, []byte(out), &list)
	if len(list.Items) != 2 {
		t.Fatalf("want the two sandboxes, got %s", out)
	}
	for _, it := range list.Items {
		if e := string(it["expires_at"]); e != "null" {
			t.Errorf("manual-cleanup sandbox has expires_at %s", e)
		}
	}
}
