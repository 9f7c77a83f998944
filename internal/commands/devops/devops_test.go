package devops_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// newSandbox starts a local server and a sandbox whose entrypoint prints
// three lines, and waits until they are in its log.
func newSandbox(t *testing.T) (*cmdtest.Env, string) {
	t.Helper()
	env := cmdtest.New(t, servertest.NoIsolation)
	id := env.NewSandbox("--entrypoint", "sh", "--entrypoint", "-c", "--entrypoint", "echo one; echo two; echo three; exec tail -f /dev/null")
	cmdtest.Eventually(t, "the entrypoint's output", func() bool {
		return cmdtest.Normalize(env.Run("devops", "logs", id).Stdout, nil) == "<TIME> one\n<TIME> two\n<TIME> three\n"
	})
	return env, id
}

const (
	logsDeprecated   = "WARN: `osb devops logs` is deprecated. Use `osb diagnostics logs`.\n"
	eventsDeprecated = "WARN: `osb devops events` is deprecated. Use `osb diagnostics events`.\n"
)

func TestDevopsAgainstTheLocalServer(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	r := env.Run("devops", "logs", id, "--tail", "2").ExpectCode(t, 0)
	if cmdtest.Normalize(r.Stdout, nil) != "<TIME> two\n<TIME> three\n" || r.Stderr != logsDeprecated {
		t.Errorf("logs --tail 2: %q %q", r.Stdout, r.Stderr)
	}
	if r := env.Run("devops", "logs", id[:8], "-n", "1", "-s", "1h", "-o", "raw"); r.Code != 0 || cmdtest.Normalize(r.Stdout, nil) != "<TIME> three\n" {
		t.Errorf("logs by prefix: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	env.Must("sandbox", "pause", id)
	r = env.Run("devops", "events", id, "-l", "1").ExpectCode(t, 0)
	if r.Stderr != eventsDeprecated || strings.Count(r.Stdout, "Event:") != 1 || !strings.HasSuffix(r.Stdout, " Paused\n") {
		t.Errorf("events -l 1: %q %q", r.Stdout, r.Stderr)
	}
	cmdtest.Golden(t, "events", cmdtest.Normalize(env.Must("devops", "events", id), map[string]string{id: "<SB>", id[:12]: "<SB12>"}))
	r = env.Run("devops", "inspect", id).ExpectCode(t, 0)
	if r.Stderr != "" || !strings.Contains(r.Stdout, "Sandbox:        "+id+"\n") || !strings.Contains(r.Stdout, "State:          Paused\n") ||
		!strings.Contains(r.Stdout, "Status:         paused\n") {
		t.Errorf("inspect: %q %q", r.Stdout, r.Stderr)
	}
	r = env.Run("devops", "summary", id, "-n", "1", "--event-limit", "2").ExpectCode(t, 0)
	for _, want := range []string{"SANDBOX DIAGNOSTICS SUMMARY\nSandbox ID: " + id, "\nEVENTS\n", "LOGS (last 1 lines)\n" + strings.Repeat("-", 40) + "\n<TIME> three\n"} {
		if !strings.Contains(cmdtest.Normalize(r.Stdout, nil), want) {
			t.Errorf("summary lacks %q:\n%s", want, r.Stdout)
		}
	}
}

func TestDevopsErrors(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	for _, verb := range []string{"inspect", "summary"} {
		env.Run("devops", verb, "nope").ExpectError(t, 4, "Sandbox 'nope' not found.")
	}
	r := env.Run("devops", "logs", "nope").ExpectCode(t, 4)
	if r.Stderr != logsDeprecated+"Error: Sandbox 'nope' not found.\n" {
		t.Errorf("logs of an unknown sandbox: %q", r.Stderr)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"logs", id, "--tail", "0"}, "--tail must be at least 1, got 0"},
		{[]string{"events", id, "--limit", "-3"}, "--limit must be at least 1, got -3"},
		{[]string{"summary", id, "--event-limit", "0"}, "--event-limit must be at least 1, got 0"},
		{[]string{"summary", id, "--tail", "x"}, `invalid argument "x"`},
		{[]string{"inspect", id, "-o", "json"}, "'json' is not one of 'raw'"},
	}
	for _, tc := range cases {
		r := env.Run(append([]string{"devops"}, tc.args...)...).ExpectCode(t, 2)
		if !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
			t.Errorf("%v: %q %q", tc.args, r.Stdout, r.Stderr)
		}
	}
	// Past the server's limit: its 422 is exit 1.
	r = env.Run("devops", "logs", id, "--tail", "10001").ExpectCode(t, 1)
	if !strings.Contains(r.Stderr, "less than or equal to 10000") {
		t.Errorf("tail 10001: %q", r.Stderr)
	}
}

// On the wire: Accept: text/plain, the defaults as query parameters, and
// the body printed as it came with a newline added when it lacks one.
func TestDevopsRequests(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RequestURI()+" accept="+r.Header.Get("Accept"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		if strings.HasSuffix(r.URL.Path, "/inspect") {
			w.Write([]byte("ends with newline\n"))
			return
		}
		w.Write([]byte("no newline"))
	}))
	defer srv.Close()
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = srv.URL
	for _, args := range [][]string{{"logs", "sb1", "-n", "0"}, {"events", "sb1", "-l", "0"}, {"summary", "sb1", "--event-limit", "-1"}, {"inspect"}, {"inspect", "sb1", "-o", "json"}} {
		env.Run(append([]string{"devops"}, args...)...).ExpectCode(t, 2)
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Fatalf("refused commands sent %v", seen)
	}
	mu.Unlock()
	outputs := map[string]string{}
	for _, args := range [][]string{{"logs", "sb1"}, {"logs", "sb1", "--since", "10m", "-n", "5"}, {"events", "sb1"}, {"inspect", "sb1"}, {"summary", "sb1"}} {
		outputs[strings.Join(args, " ")] = env.Must(append([]string{"devops"}, args...)...)
	}
	want := []string{
		"/v1/sandboxes/sb1/diagnostics/logs?tail=100 accept=text/plain",
		"/v1/sandboxes/sb1/diagnostics/logs?since=10m&tail=5 accept=text/plain",
		"/v1/sandboxes/sb1/diagnostics/events?limit=50 accept=text/plain",
		"/v1/sandboxes/sb1/diagnostics/inspect accept=text/plain",
		"/v1/sandboxes/sb1/diagnostics/summary?event_limit=20&tail=50 accept=text/plain",
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if outputs["logs sb1"] != "no newline\n" || outputs["inspect sb1"] != "ends with newline\n" {
		t.Errorf("outputs %q", outputs)
	}
}
