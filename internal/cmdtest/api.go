package cmdtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

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

// NewSandbox creates a sandbox through osb (`sandbox create -i python:3.11
// -o json` and args) and returns its id.
func (e *Env) NewSandbox(args ...string) string {
	e.T.Helper()
	out := e.Must(append([]string{"sandbox", "create", "-i", "python:3.11", "-o", "json"}, args...)...)
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == "" {
		e.T.Fatalf("sandbox create printed no id: %v\n%s", err, out)
	}
	return v.ID
}

// Eventually polls cond until it holds, and fails the test naming what it
// waited for if it never does within a minute (a generous bound for a
// shared, slow machine: a wait, not a timing assertion).
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ExpectJSONError checks a failed command under json output: its exit
// code, nothing on stdout, and stderr holding exactly the error object
// with this message and code.
func (r Result) ExpectJSONError(t testing.TB, code int, message string) Result {
	t.Helper()
	r.ExpectCode(t, code)
	var e struct {
		Status   string `json:"status"`
		Message  string `json:"message"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(r.Stderr), &e); err != nil || r.Stdout != "" ||
		e.Status != "error" || e.Message != message || e.ExitCode != code {
		t.Errorf("stdout %q, stderr %q; want nothing on stdout and a json error on stderr with exit_code %d and message %q",
			r.Stdout, r.Stderr, code, message)
	}
	return r
}
