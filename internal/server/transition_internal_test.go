//go:build linux

package server

import (
	"encoding/json"
	"github.com/osb-dev/osb/internal/testwait"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestSlowTransitionHoldsUpNoOtherSandbox pauses one sandbox through a
// transition whose work the test holds for as long as it likes, and shows
// that meanwhile the server answers for that sandbox (Pausing) and for
// every other: get, list, create, pause, resume and delete.
func TestSlowTransitionHoldsUpNoOtherSandbox(t *testing.T) {
	t.Parallel()
	s, send := inProcess(t)
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		status, raw := send(method, path, body)
		var m map[string]any
		json.Unmarshal(raw, &m)
		return status, m
	}
	slow, other := createSleeper(t, send), createSleeper(t, send)

	held, release := make(chan struct{}), make(chan struct{})
	paused := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		s.transition(rec, slow, stateRunning, statePausing, statePaused, codeNotRunning, func(rec *record) error {
			close(held)
			<-release
			return rec.sb.Pause()
		})
		paused <- rec.Code
	}()
	<-held
	defer func() {
		close(release)
		if code := <-paused; code != http.StatusAccepted {
			t.Errorf("held pause answered %d, want 202", code)
		}
	}()

	steps := []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/v1/sandboxes/" + slow, "", http.StatusOK},
		{"GET", "/v1/sandboxes/" + other, "", http.StatusOK},
		{"GET", "/v1/sandboxes", "", http.StatusOK},
		{"POST", "/v1/sandboxes/" + other + "/pause", "", http.StatusAccepted},
		{"POST", "/v1/sandboxes/" + other + "/resume", "", http.StatusAccepted},
		{"POST", "/v1/sandboxes/" + slow + "/pause", "", http.StatusConflict},
		{"POST", "/v1/sandboxes", sleeperBody, http.StatusAccepted},
		{"DELETE", "/v1/sandboxes/" + other, "", http.StatusNoContent},
	}
	for _, st := range steps {
		testwait.Finishes(t, st.method+" "+st.path, func() {
			if code, m := call(st.method, st.path, st.body); code != st.want {
				t.Errorf("%s %s: %d %v, want %d", st.method, st.path, code, m, st.want)
			}
		})
	}
	_, m := call("GET", "/v1/sandboxes/"+slow, "")
	if state := m["status"].(map[string]any)["state"]; state != statePausing {
		t.Errorf("held sandbox is %v, want %s", state, statePausing)
	}
}
