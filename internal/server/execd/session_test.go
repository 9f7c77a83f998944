//go:build linux

package execd

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

func createSession(t *testing.T, url string, body any) string {
	t.Helper()
	r := call(t, "POST", url+"/session", body)
	var out struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(r.body), &out); r.status != 200 || err != nil || len(out.SessionID) != 36 {
		t.Fatalf("create session: %d %s", r.status, r.body)
	}
	return out.SessionID
}

func sessionRun(t *testing.T, url, sid string, body map[string]any) streamSummary {
	t.Helper()
	s := summarize(events(t, url+"/session/"+sid+"/run", body))
	if s.id != sid {
		t.Errorf("init carries %q, want the session id", s.id)
	}
	return s
}

func TestSessionKeepsState(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		sid := createSession(t, url, map[string]string{"cwd": "/workspace/proj"})
		if _, err := sb.FS().Stat("workspace/proj"); err != nil {
			t.Fatalf("session cwd not created: %v", err)
		}
		steps := []struct {
			req  map[string]any
			want streamSummary
		}{
			{map[string]any{"command": "basename $PWD; mkdir -p d && cd d && export X=42 && f() { echo from-f; }"}, streamSummary{stdout: lines("proj"), end: "execution_complete"}},
			// stderr is reported as stdout; a last line without its
			// newline is sent all the same.
			{map[string]any{"command": `basename "$PWD"; echo "$X" >&2; f; printf 'no newline'`}, streamSummary{stdout: lines("d", "42", "from-f", "no newline"), end: "execution_complete"}},
			{map[string]any{"command": "false"}, streamSummary{end: `error/CommandExecError/1/["exit status 1"]`}},
			// A per-run cwd carries over to the next run.
			{map[string]any{"command": "true", "cwd": "/tmp"}, streamSummary{end: "execution_complete"}},
			{map[string]any{"command": "basename $PWD; cat; echo read-nothing"}, streamSummary{stdout: lines("tmp", "read-nothing"), end: "execution_complete"}},
			// A syntax error stays inside its run.
			{map[string]any{"command": "echo 'unclosed"}, streamSummary{stdout: "", end: `error/CommandExecError/2/["exit status 2"]`}},
			{map[string]any{"command": "echo \"$X\""}, streamSummary{stdout: lines("42"), end: "execution_complete"}},
			// `exit` ends the run, not the session (on execd each run is a
			// fresh bash): the directory and exported variables stay.
			{map[string]any{"command": "export Y=7; cd /tmp; echo bye; exit 3; echo not-reached"}, streamSummary{stdout: lines("bye"), end: `error/CommandExecError/3/["exit status 3"]`}},
			{map[string]any{"command": `echo "$X $Y $(basename "$PWD")"`}, streamSummary{stdout: lines("42 7 tmp"), end: "execution_complete"}},
			{map[string]any{"command": "set -e; false; echo not-reached"}, streamSummary{end: `error/CommandExecError/1/["exit status 1"]`}},
			{map[string]any{"command": "false; echo set -e is gone"}, streamSummary{stdout: lines("set -e is gone"), end: "execution_complete"}},
			// An exit inside a redirection still ends the run.
			{map[string]any{"command": "{ echo hidden; exit 4; } >/dev/null 2>&1"}, streamSummary{end: `error/CommandExecError/4/["exit status 4"]`}},
			// A run that redirects the shell's output affects that run only.
			{map[string]any{"command": "exec >/dev/null 2>&1; echo hidden"}, streamSummary{end: "execution_complete"}},
			{map[string]any{"command": "echo shown; echo also >&2"}, streamSummary{stdout: lines("shown", "also"), end: "execution_complete"}},
		}
		for _, st := range steps {
			got := sessionRun(t, url, sid, st.req)
			got.id = ""
			if st.req["command"] == "echo 'unclosed" {
				got.stdout = "" // bash's message wording varies
			}
			if got != st.want {
				t.Errorf("%v: %+v, want %+v", st.req, got, st.want)
			}
		}
	})
}

func TestSessionTimeout(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		sid := createSession(t, url, nil)
		// The run's children are killed; the stream ends as on execd, with a
		// bare error object and no blank line; the session lives on.
		// The timeout leaves bash time to start the sleep on a loaded
		// machine: with only the shell to kill, the session would go too.
		r := call(t, "POST", url+"/session/"+sid+"/run", map[string]any{"command": "export KEPT=yes; echo hi; sleep 100", "timeout": 3000})
		end := "}\n\n" + `{"code":"RUNTIME_ERROR","message":"error running in session. timeout after 3s"}`
		if !strings.Contains(r.body, `"text":"hi"`) || !strings.HasSuffix(r.body, end) {
			t.Errorf("timed-out stream: %q", r.body)
		}
		if s := sessionRun(t, url, sid, map[string]any{"command": "echo $KEPT"}); s.stdout != lines("yes") {
			t.Errorf("after timeout: %+v", s)
		}
		// A run with nothing but the shell to kill takes the session with it.
		s := sessionRun(t, url, sid, map[string]any{"command": "while :; do :; done", "timeout": 100})
		if s.end != "server_error/RUNTIME_ERROR/error running in session. timeout after 100ms/[]" {
			t.Errorf("builtin loop: %+v", s)
		}
		if r := call(t, "POST", url+"/session/"+sid+"/run", map[string]any{"command": "true"}); r.status != 500 {
			t.Errorf("run after the session died: %d %s", r.status, r.body)
		}
	})
}

func TestSessionLifecycleErrors(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t, false)
	srv := httptest.NewServer(New(sb, Options{}))
	defer srv.Close()
	url := srv.URL
	sid := createSession(t, url, nil)
	notFound := `{"code":"RUNTIME_ERROR","message":"error running in session. context not found"}`
	cases := []struct {
		method, path string
		body         any
		status       int
		want         string
	}{
		{"POST", "/session", "{bad", 400, `{"code":"INVALID_REQUEST_BODY","message":"error parsing request. invalid character 'b' looking for beginning of object key string"}`},
		{"POST", "/session", map[string]string{"cwd": "/nonexistent-dir"}, 400, `{"code":"INVALID_REQUEST_BODY","message":"invalid request. working directory does not exist: /nonexistent-dir"}`},
		{"POST", "/session/" + sid + "/run", map[string]any{}, 400, `{"code":"INVALID_REQUEST_BODY","message":"invalid request, validation error Key: 'RunInSessionRequest.Command' Error:Field validation for 'Command' failed on the 'required' tag"}`},
		{"POST", "/session/" + sid + "/run", map[string]any{"command": "true", "cwd": "/nope"}, 400, `{"code":"INVALID_REQUEST_BODY","message":"invalid request. working directory does not exist: /nope"}`},
		{"POST", "/session/nope/run", map[string]any{"command": "true"}, 500, notFound},
		{"DELETE", "/session/nope", nil, 404, `{"code":"CONTEXT_NOT_FOUND","message":"session nope not found"}`},
		{"DELETE", "/session/" + sid, nil, 200, ""},
		{"DELETE", "/session/" + sid, nil, 404, `{"code":"CONTEXT_NOT_FOUND","message":"session ` + sid + ` not found"}`},
		{"POST", "/session/" + sid + "/run", map[string]any{"command": "true"}, 500, notFound},
	}
	for _, c := range cases {
		r := call(t, c.method, url+c.path, c.body)
		if r.status != c.status || strings.TrimSuffix(r.body, "\n") != c.want {
			t.Errorf("%s %s %v: %d %s", c.method, c.path, c.body, r.status, r.body)
		}
	}
	// Interrupting a session id closes and deletes the session.
	sid = createSession(t, url, nil)
	if r := call(t, "DELETE", url+"/command?id="+sid, nil); r.status != 200 {
		t.Errorf("interrupt session: %d %s", r.status, r.body)
	}
	if r := call(t, "DELETE", url+"/session/"+sid, nil); r.status != 404 {
		t.Errorf("session after interrupt: %d %s", r.status, r.body)
	}
}

func TestSentinelScanner(t *testing.T) {
	t.Parallel()
	mark := []byte("\x1eOSB-abc:")
	input := "out\xc3\xa9put \x1eOSB-ab no\n" + string(mark) + "17\n"
	// Fed whole and a few bytes at a time, the output is the same and
	// never shows part of the sentinel.
	for _, step := range []int{len(input), 1, 2, 5} {
		sc := &sentinelScanner{mark: mark}
		var shown strings.Builder
		status, done := 0, false
		for i := 0; i < len(input) && !done; i += step {
			var show []byte
			show, status, done = sc.feed([]byte(input[i:min(i+step, len(input))]))
			if strings.Contains(string(show), "\x1eOSB-abc") {
				t.Errorf("step %d showed %q", step, show)
			}
			shown.Write(show)
		}
		if shown.String() != "out\xc3\xa9put \x1eOSB-ab no\n" || status != 17 || !done {
			t.Errorf("step %d: %q %d %v", step, shown.String(), status, done)
		}
	}
}
