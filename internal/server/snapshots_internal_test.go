//go:build linux

package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestSnapshotConflicts covers the states a real capture passes through
// too quickly for a test to catch over HTTP: a snapshot still Creating, or
// being restored.
func TestSnapshotConflicts(t *testing.T) {
	t.Parallel()
	s, send := inProcess(t)
	call := func(method, path, body string) (int, string) {
		t.Helper()
		status, raw := send(method, path, body)
		var e struct{ Code string }
		json.Unmarshal(raw, &e)
		return status, e.Code
	}
	sb := struct{ ID string }{createSleeper(t, send)}
	creating := snapshotMeta{snapshotJSON: snapshotJSON{ID: "snap_creating", SandboxID: sb.ID, Status: statusJSON{State: snapCreating}}}
	if err := s.snapshots.begin(creating); err != nil {
		t.Fatal(err)
	}
	ready := snapshotMeta{snapshotJSON: snapshotJSON{ID: "snap_ready", SandboxID: "gone", Status: statusJSON{State: snapCreating}}}
	if err := s.snapshots.begin(ready); err != nil {
		t.Fatal(err)
	}
	s.snapshots.finish("snap_ready", nil, 0)
	s.snapshots.items["snap_ready"].restoring = 1

	checks := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/sandboxes/" + sb.ID + "/snapshots", "", 409, codeSnapshotSourceState},
		{"DELETE", "/v1/snapshots/snap_creating", "", 409, codeSnapshotState},
		{"POST", "/v1/sandboxes", `{"snapshotId":"snap_creating","resourceLimits":{"cpu":"1"}}`, 409, codeSnapshotNotReady},
		{"DELETE", "/v1/snapshots/snap_ready", "", 409, codeSnapshotState},
	}
	for _, c := range checks {
		if status, code := call(c.method, c.path, c.body); status != c.status || code != c.code {
			t.Errorf("%s %s: %d %s; want %d %s", c.method, c.path, status, code, c.status, c.code)
		}
	}
	s.snapshots.items["snap_ready"].restoring = 0
	if status, _ := call("DELETE", "/v1/snapshots/snap_ready", ""); status != http.StatusNoContent {
		t.Errorf("delete once restored: %d", status)
	}
}
