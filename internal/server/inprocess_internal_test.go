//go:build linux

package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sleeperBody creates a sandbox that runs until it is removed.
const sleeperBody = `{"image":{"uri":"x"},"entrypoint":["sleep","3600"],"resourceLimits":{"cpu":"1"}}`

// inProcess makes an unisolated server, closed at cleanup, and a call that
// sends a request straight to its handler and answers the status and body,
// for tests that reach into the server while requests run.
func inProcess(t *testing.T) (*Server, func(method, path, body string) (int, []byte)) {
	t.Helper()
	s, err := New(Options{Listen: "127.0.0.1:0", DataDir: t.TempDir(), NoIsolation: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := s.handler()
	return s, func(method, path, body string) (int, []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
		return rec.Code, rec.Body.Bytes()
	}
}

// createSleeper creates a sleeperBody sandbox and returns its id.
func createSleeper(t *testing.T, call func(method, path, body string) (int, []byte)) string {
	t.Helper()
	status, body := call("POST", "/v1/sandboxes", sleeperBody)
	var sb struct{ ID string }
	if json.Unmarshal(body, &sb); status != http.StatusAccepted {
		t.Fatalf("create: %d %s", status, body)
	}
	return sb.ID
}
