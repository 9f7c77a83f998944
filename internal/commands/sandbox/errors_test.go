package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// Each error shape the local server sends, as one line and an exit code.
func TestServerErrorShapes(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := env.NewSandbox()
	env.Must("sandbox", "pause", id)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"ErrorResponse 404", []string{"sandbox", "get", "0000"}, 4, "Sandbox 0000 not found. (HTTP 404, code DOCKER::SANDBOX_NOT_FOUND, request id "},
		{"ErrorResponse 409", []string{"sandbox", "pause", id}, 1, "(HTTP 409, code DOCKER::SANDBOX_NOT_RUNNING"},
		{"ErrorResponse 400", []string{"sandbox", "create", "-i", "x", "-m", "bad key=v"}, 1, "(HTTP 400, code SANDBOX::INVALID_METADATA_LABEL"},
		{"FastAPI 422", []string{"sandbox", "create", "-i", "x", "-t", "30s"}, 1, "body.timeout: Input should be greater than or equal to 60 (HTTP 422"},
		{"401 wrong key", []string{"--api-key", "wrong", "sandbox", "list"}, 3, "Invalid API key. (HTTP 401, code INVALID_API_KEY"},
		{"401 on a sandbox verb", []string{"--api-key", "wrong", "sandbox", "kill", id}, 3, "check the API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.Run(tc.args...).ExpectError(t, tc.code, tc.want)
		})
	}
	expectSandboxes(t, env, 1)
}

// Under -o json and -o yaml an error is an object on stderr; stdout stays empty.
func TestErrorsAsObjects(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	r := env.Run("sandbox", "get", "0000", "-o", "json").ExpectCode(t, 4)
	var e map[string]any
	if err := json.Unmarshal([]byte(r.Stderr), &e); err != nil || r.Stdout != "" {
		t.Fatalf("stdout %q, stderr %q", r.Stdout, r.Stderr)
	}
	if e["status"] != "error" || e["exit_code"] != 4.0 || e["http_status"] != 404.0 || e["code"] != "DOCKER::SANDBOX_NOT_FOUND" || e["request_id"] == nil {
		t.Errorf("error object %v", e)
	}
	r = env.Run("sandbox", "list", "-s", "asleep", "-o", "yaml").ExpectCode(t, 2)
	if !strings.HasPrefix(r.Stderr, "exit_code: 2\nmessage: 'Invalid sandbox state ''asleep''.") || r.Stdout != "" {
		t.Errorf("yaml usage error: stdout %q, stderr %q", r.Stdout, r.Stderr)
	}
}

// A proxy's HTML page is reported by status, without the HTML.
func TestNonJSONError(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, "sbx-1")
	fs.env(t).Run("sandbox", "pause", "sbx-1").ExpectError(t, 1, "Bad Gateway (the server sent a non-JSON response) (HTTP 502)")
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	addr := cmdtest.ClosedAddr(t)
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = addr
	for _, args := range [][]string{
		{"sandbox", "list"},
		{"sandbox", "get", "sbx-1"},
		{"sandbox", "create", "-i", "x"},
		{"sandbox", "health", "sbx-1"},
	} {
		env.Run(args...).ExpectError(t, 6, "cannot reach http://"+addr+"/v1/sandboxes")
	}
}

// A server that accepts the connection and never answers: the request
// timeout ends the command with exit 5.
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = srv.URL
	env.Run("--request-timeout", "1", "sandbox", "get", "sbx-1").ExpectError(t, 5, "timed out")
	env.Run("--request-timeout", "1", "sandbox", "create", "-i", "x").ExpectError(t, 5, "POST")
}

// A prefix two ids share is a usage error naming both; a unique one works.
func TestAmbiguousPrefix(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	byFirst := map[byte][]string{}
	var shared []string
	// Ids are random hex: among 17 sandboxes two must share a first digit.
	for len(shared) == 0 {
		id := env.NewSandbox("--skip-health-check")
		byFirst[id[0]] = append(byFirst[id[0]], id)
		if ids := byFirst[id[0]]; len(ids) == 2 {
			shared = ids
		}
	}
	sort.Strings(shared)
	prefix := shared[0][:1]
	for _, args := range [][]string{
		{"sandbox", "get", prefix},
		{"sandbox", "kill", prefix},
		{"sandbox", "renew", prefix, "-t", "1h"},
		{"sandbox", "health", prefix},
	} {
		env.Run(args...).ExpectError(t, 2, "sandbox id prefix '"+prefix+"' is ambiguous; it matches: "+shared[0]+", "+shared[1])
	}
	n := len(sandboxIDs(t, env))
	env.Must("sandbox", "kill", shared[0][:12])
	expectSandboxes(t, env, n-1)
}

// Sandbox id arguments complete to the ids the server has, with their state.
func TestCompletion(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a, b := env.NewSandbox(), env.NewSandbox()
	env.Must("sandbox", "pause", b)
	r := env.Run("__complete", "sandbox", "get", "").ExpectCode(t, 0)
	want := []string{a + "\tRunning", b + "\tPaused"}
	sort.Strings(want)
	if got := strings.Split(strings.TrimSuffix(r.Stdout, "\n:4\n"), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("candidates %q, want %q", got, want)
	}
	r = env.Run("__complete", "sandbox", "kill", a, b[:1]).ExpectCode(t, 0)
	if r.Stdout != b+"\tPaused\n:4\n" {
		t.Errorf("kill completes further ids, not those given: %q", r.Stdout)
	}
	r = env.Run("__complete", "sandbox", "get", a, "").ExpectCode(t, 0)
	if r.Stdout != ":4\n" {
		t.Errorf("get takes one id: %q", r.Stdout)
	}
	env.Vars["OPEN_SANDBOX_API_KEY"] = "wrong"
	if r := env.Run("__complete", "sandbox", "pause", ""); r.Code != 0 || r.Stdout != ":4\n" {
		t.Errorf("a failing listing must complete nothing, quietly: %+v", r)
	}
}
