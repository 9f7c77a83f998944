package cmdtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/server/servertest"
)

// API sends one request straight to the env's server (not through osb),
// with the test API key, and returns the status and body. Tests use it to
// check server state, e.g. that a refused command sent nothing.
func (e *Env) API(method, path string, body any) (int, []byte) {
	e.T.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.Server.URL()+"/v1"+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	req.Header.Set("OPEN-SANDBOX-API-KEY", servertest.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatal(err)
	}
	return resp.StatusCode, b
}

// APIGet is API for a GET that must answer 200 with JSON, decoded into v.
func (e *Env) APIGet(path string, v any) {
	e.T.Helper()
	status, b := e.API(http.MethodGet, path, nil)
	if status != http.StatusOK {
		e.T.Fatalf("GET %s: %d %s", path, status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		e.T.Fatalf("GET %s: %v in %s", path, err, b)
	}
}

// ExpectError checks a failed command: its exit code, nothing on stdout,
// and one "Error: " line on stderr containing want.
func (r Result) ExpectError(t testing.TB, code int, want string) Result {
	t.Helper()
	r.ExpectCode(t, code)
	if r.Stdout != "" {
		t.Errorf("stdout should be empty, got %q", r.Stdout)
	}
	if strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, "Error: ") || !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr %q, want one Error: line containing %q", r.Stderr, want)
	}
	return r
}

// Combined is stdout, then stderr (when any) after a separator line: what
// golden files hold.
func (r Result) Combined() string {
	if r.Stderr == "" {
		return r.Stdout
	}
	return r.Stdout + "--- stderr\n" + r.Stderr
}
