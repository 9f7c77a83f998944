//go:build linux

package execd

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

func init() {
	// Keep the waits the real execd has, shorter where a test only waits
	// them out: tests read streams to their end. The graces stay long
	// enough for a loaded machine: a command that takes SIGTERM, or a
	// session's shell reporting a kill, must get there before the grace
	// ends, or the test sees SIGKILL's outcome instead.
	commandTail = 20 * time.Millisecond
	interruptGrace = 2 * time.Second
	sessionKillGrace = 2 * time.Second
}

// eachMode runs f against a sandbox in namespaces (where this machine
// allows it) and one without, at the same time: commands take different
// paths in each.
func eachMode(t *testing.T, f func(t *testing.T, sb *sandbox.Sandbox, url string)) {
	for _, isolated := range []bool{false, true} {
		name := map[bool]string{false: "unisolated", true: "isolated"}[isolated]
		t.Run(name, func(t *testing.T) {
			if isolated && !sandbox.Probe().Available {
				t.Skip("namespaces unavailable:", sandbox.Probe().Reason)
			}
			t.Parallel()
			sb := startSandbox(t, isolated)
			srv := httptest.NewServer(handlerFor(sb, Options{}))
			t.Cleanup(srv.Close)
			f(t, sb, srv.URL)
		})
	}
}

// events runs a request and reads its whole stream.
func events(t *testing.T, url string, body any) []*client.Event {
	t.Helper()
	resp := open(t, "POST", url, body)
	defer resp.Body.Close()
	return readEvents(t, resp, nil)
}

// readEvents reads a 200 stream to its end, each event copied out of the
// reader's buffers; each is handed to onEvent too, when it is given.
func readEvents(t *testing.T, resp *http.Response, onEvent func(*client.Event)) []*client.Event {
	t.Helper()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: status %d: %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, b)
	}
	r := client.NewEventReader(resp.Body)
	var evs []*client.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev.Clone())
		if onEvent != nil {
			onEvent(ev)
		}
	}
}

// streamSummary sums a stream up: the init id, the output events of each
// kind (rendered by lines), and the last non-ping event rendered as
// type[/ename/evalue/traceback].
type streamSummary struct {
	id, stdout, stderr, end string
}

func summarize(evs []*client.Event) streamSummary {
	var s streamSummary
	var out, errs []string
	for _, ev := range evs {
		switch ev.Type {
		case client.EventInit:
			s.id = ev.Text
		case client.EventStdout:
			out = append(out, string(ev.Data))
		case client.EventStderr:
			errs = append(errs, string(ev.Data))
		case client.EventPing:
		default:
			s.end = ev.Type
			if ev.Error != nil {
				s.end += fmt.Sprintf("/%s/%s/%q", ev.Error.Name, ev.Error.Value, ev.Error.Traceback)
			}
		}
	}
	s.stdout, s.stderr = lines(out...), lines(errs...)
	return s
}

// lines renders the texts of output events, one event each, as summarize
// shows them: "" for none.
func lines(texts ...string) string {
	if len(texts) == 0 {
		return ""
	}
	return fmt.Sprintf("%q", texts)
}

func TestCommandStreamFraming(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		r := call(t, "POST", url+"/command", map[string]any{"command": `echo hi; echo err >&2; printf 'a\r\nb'`})
		if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" || r.header.Get("X-Accel-Buffering") != "no" {
			t.Fatalf("status %d, headers %v", r.status, r.header)
		}
		// Every frame is a bare JSON object and a blank line; init first
		// (with a 32-hex id), then a ping, the terminal frame last.
		frames := strings.Split(strings.TrimSuffix(r.body, "\n\n"), "\n\n")
		var types []string
		for _, f := range frames {
			var m map[string]any
			if err := json.Unmarshal([]byte(f), &m); err != nil || strings.Contains(f, "\n") {
				t.Fatalf("frame %q: %v", f, err)
			}
			if _, ok := m["timestamp"].(float64); !ok {
				t.Errorf("frame without timestamp: %s", f)
			}
			types = append(types, m["type"].(string))
		}
		if types[0] != "init" || types[1] != "ping" || types[len(types)-1] != "execution_complete" {
			t.Errorf("frame types %v", types)
		}
		var init struct{ Text string }
		json.Unmarshal([]byte(frames[0]), &init)
		if len(init.Text) != 32 {
			t.Errorf("init id %q", init.Text)
		}
		s := summarize(events(t, url+"/command", map[string]any{"command": `echo hi; echo err >&2; printf 'a\r\nb'`}))
		if s.stdout != lines("hi", "a", "b") || s.stderr != lines("err") || s.end != "execution_complete" {
			t.Errorf("got %+v", s)
		}
	})
}

func TestCommandExitCodes(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		cases := []struct {
			req  map[string]any
			want string
		}{
			{map[string]any{"command": "exit 3"}, `error/CommandExecError/3/["exit status 3"]`},
			{map[string]any{"command": "nonexistent-cmd-xyz"}, `error/CommandExecError/127/["exit status 127"]`},
			{map[string]any{"command": "sleep 30", "timeout": 200}, `error/CommandExecError/-1/["signal: killed"]`},
			{map[string]any{"command": "kill -9 $$"}, `error/CommandExecError/-1/["signal: killed"]`},
			{map[string]any{"argv": []string{"nonexistent-program-xyz", "a"}}, `error/CommandExecError/exec: "nonexistent-program-xyz": executable file not found in $PATH/["exec: \"nonexistent-program-xyz\": executable file not found in $PATH"]`},
			{map[string]any{"argv": []string{"./missing.sh"}}, `error/CommandExecError/fork/exec ./missing.sh: no such file or directory/["fork/exec ./missing.sh: no such file or directory"]`},
			{map[string]any{"argv": []string{"sh", "-c", `echo "$1"`, "sh", "a b;c"}}, `execution_complete`},
		}
		for _, c := range cases {
			if got := summarize(events(t, url+"/command", c.req)).end; got != c.want {
				t.Errorf("%v: %s, want %s", c.req, got, c.want)
			}
		}
		s := summarize(events(t, url+"/command", map[string]any{"argv": []string{"sh", "-c", `echo "$1"`, "sh", "a b;c"}}))
		if s.stdout != lines("a b;c") {
			t.Errorf("argv is not shell-expanded: %q", s.stdout)
		}
		s = summarize(events(t, url+"/command", map[string]any{"command": "nonexistent-cmd-xyz"}))
		if !strings.HasSuffix(s.stderr, `nonexistent-cmd-xyz: command not found"]`) {
			t.Errorf("stderr %q", s.stderr)
		}
	})
}

func TestCommandCwdEnvAndUser(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		if err := sb.FS().MkdirAll("workspace/sub dir", 0o755); err != nil {
			t.Fatal(err)
		}
		req := map[string]any{
			"command": `basename "$PWD"; echo "$FOO $SANDBOX_VAR"`,
			"cwd":     "${SUBDIR}", "envs": map[string]string{"FOO": "bar", "SUBDIR": "/workspace/sub dir"},
		}
		if s := summarize(events(t, url+"/command", req)); s.stdout != lines("sub dir", "bar from-sandbox") || s.end != "execution_complete" {
			t.Errorf("got %+v", s)
		}
		if s := summarize(events(t, url+"/command", map[string]any{"command": `basename "$PWD"`, "cwd": "sub dir"})); s.stdout != lines("sub dir") {
			t.Errorf("relative cwd: %+v", s)
		}
		if !sb.Isolated() {
			return // unisolated, the sandbox directory (under a private temp dir) is not nobody's to enter
		}
		req = map[string]any{"command": "id -u; id -g", "uid": 65534, "gid": 65533}
		if s := summarize(events(t, url+"/command", req)); s.stdout != lines("65534", "65533") || s.end != "execution_complete" {
			t.Errorf("uid/gid: %+v", s)
		}
	})
}

func TestCommandValidation(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t, false)
	srv := httptest.NewServer(New(sb, Options{}))
	defer srv.Close()
	cases := []struct {
		body any
		msg  string
	}{
		{"", "error parsing request, MAYBE invalid body format. EOF"},
		// The type name shows, as on execd.
		{map[string]any{"command": []string{"ls"}}, "error parsing request, MAYBE invalid body format. json: cannot unmarshal array into Go struct field RunCommandRequest.command of type string"},
		{map[string]any{}, "invalid request, validation error Key: 'RunCommandRequest.Command' Error:Field validation for 'Command' failed on the 'required' tag"},
		{map[string]any{"command": "true", "timeout": -1}, "invalid request, validation error Key: 'RunCommandRequest.Timeout' Error:Field validation for 'Timeout' failed on the 'gte' tag"},
		{map[string]any{"command": "true", "gid": 1}, "invalid request, validation error uid is required when gid is provided"},
		{map[string]any{"command": "true", "uid": -1}, "invalid request, validation error Key: 'RunCommandRequest.UID' Error:Field validation for 'UID' failed on the 'gte' tag"},
		{map[string]any{"command": "true", "cwd": "/nonexistent"}, "invalid request, validation error working directory does not exist: /nonexistent"},
		{map[string]any{"command": "true", "cwd": "/workspace/$NOPE_UNSET"}, "invalid request, validation error working directory /workspace/$NOPE_UNSET uses an undefined variable: NOPE_UNSET"},
		{map[string]any{"command": "true", "argv": []string{"true"}}, "invalid request, validation error command and argv are mutually exclusive"},
		{map[string]any{"argv": []string{""}}, "invalid request, validation error argv[0] must not be empty"},
	}
	for _, c := range cases {
		r := call(t, "POST", srv.URL+"/command", c.body)
		want, _ := json.Marshal(map[string]string{"code": "INVALID_REQUEST_BODY", "message": c.msg})
		if r.status != 400 || r.body != string(want)+"\n" {
			t.Errorf("%v: %d %s\nwant %s", c.body, r.status, r.body, want)
		}
	}
}

func TestCommandOutputBytes(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t, false)
	srv := httptest.NewServer(New(sb, Options{}))
	defer srv.Close()
	// A line that is not UTF-8 comes with its exact bytes; valid text
	// needs no copy.
	invalid := call(t, "POST", srv.URL+"/command", map[string]any{"command": `printf 'caf\351 \377\n'`})
	if want := `"text":"caf\ufffd \ufffd","text_base64":"` + base64.StdEncoding.EncodeToString([]byte("caf\xe9 \xff")) + `"`; !strings.Contains(invalid.body, want) {
		t.Errorf("body %s\nwant it to contain %s", invalid.body, want)
	}
	valid := call(t, "POST", srv.URL+"/command", map[string]any{"command": `printf '\303\251t\303\251 <&>'`})
	if !strings.Contains(valid.body, `"text":"été \u003c\u0026\u003e","timestamp"`) {
		t.Errorf("body %s", valid.body)
	}
	s := summarize(events(t, srv.URL+"/command", map[string]any{"command": `printf 'caf\351 \377\n'`}))
	if s.stdout != lines("caf\xe9 \xff") {
		t.Errorf("stdout %q", s.stdout)
	}
}

// waitFinished polls a command's status until it is no longer running.
func waitFinished(t *testing.T, url, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r := call(t, "GET", url+"/command/status/"+id, nil)
		var st map[string]any
		json.Unmarshal([]byte(r.body), &st)
		if st["running"] == false {
			return st
		}
	}
	t.Fatalf("command %s still running", id)
	return nil
}

func TestBackgroundStatusAndLogs(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		evs := events(t, url+"/command", map[string]any{"background": true,
			"command": `echo out1; echo err1 >&2; while [ ! -e go ]; do sleep 0.02; done; echo second; exit 4`})
		s := summarize(evs)
		if s.end != "execution_complete" || s.stdout != "" {
			t.Fatalf("background stream %+v", s)
		}
		id := s.id
		st := call(t, "GET", url+"/command/status/"+id, nil)
		var running map[string]any
		json.Unmarshal([]byte(st.body), &running)
		if st.status != 200 || running["running"] != true || running["content"] == nil || running["started_at"] == nil {
			t.Errorf("status %d %s", st.status, st.body)
		}
		for _, absent := range []string{"exit_code", "finished_at", "error"} {
			if _, ok := running[absent]; ok {
				t.Errorf("running status has %s: %s", absent, st.body)
			}
		}
		// The first lines are there before the command ends.
		var logs answer
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if logs = call(t, "GET", url+"/command/"+id+"/logs", nil); logs.body == "out1\nerr1\n" {
				break
			}
		}
		if logs.body != "out1\nerr1\n" || logs.header.Get("EXECD-COMMANDS-TAIL-CURSOR") != "10" || logs.header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("logs %q %v", logs.body, logs.header)
		}
		if err := sb.FS().WriteFile("workspace/go", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		done := waitFinished(t, url, id)
		if done["exit_code"] != float64(4) || done["error"] != "exit status 4" || done["finished_at"] == nil {
			t.Errorf("finished status %v", done)
		}
		more := call(t, "GET", url+"/command/"+id+"/logs?cursor=10", nil)
		if more.body != "second\n" || more.header.Get("EXECD-COMMANDS-TAIL-CURSOR") != "17" {
			t.Errorf("logs from cursor: %q %v", more.body, more.header)
		}
		past := call(t, "GET", url+"/command/"+id+"/logs?cursor=9999", nil)
		if past.status != 200 || past.body != "" || past.header.Get("EXECD-COMMANDS-TAIL-CURSOR") != "9999" {
			t.Errorf("cursor past the end: %d %q %v", past.status, past.body, past.header)
		}
		if r := call(t, "GET", url+"/command/"+id+"/logs?cursor=-1", nil); r.status != 400 || !strings.Contains(r.body, "invalid argument") {
			t.Errorf("negative cursor: %d %s", r.status, r.body)
		}
	})
}

func TestCommandLookupErrors(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t, false)
	srv := httptest.NewServer(New(sb, Options{}))
	defer srv.Close()
	fg := summarize(events(t, srv.URL+"/command", map[string]any{"command": "true"}))
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/command/status/nope", 404, `{"code":"INVALID_REQUEST_BODY","message":"command not found: nope"}`},
		{"GET", "/command/nope/logs", 400, `{"code":"INVALID_REQUEST_BODY","message":"command not found: nope"}`},
		{"GET", "/command/" + fg.id + "/logs", 400, `{"code":"INVALID_REQUEST_BODY","message":"command ` + fg.id + ` is not running in background"}`},
		{"DELETE", "/command", 400, `{"code":"MISSING_QUERY","message":"missing query parameter 'id'"}`},
		{"DELETE", "/command?id=nope", 500, `{"code":"RUNTIME_ERROR","message":"error interruptting code context. no such session"}`},
		{"DELETE", "/command?id=" + fg.id, 500, `{"code":"RUNTIME_ERROR","message":"error interruptting code context. command session ` + fg.id + ` is not running"}`},
		{"GET", "/command/x/y", 404, "404 page not found\n"},
	}
	for _, c := range cases {
		r := call(t, c.method, srv.URL+c.path, nil)
		if r.status != c.status || strings.TrimSuffix(r.body, "\n") != strings.TrimSuffix(c.body, "\n") {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	st := call(t, "GET", srv.URL+"/command/status/"+fg.id, nil)
	var m map[string]any
	json.Unmarshal([]byte(st.body), &m)
	if m["running"] != false || m["exit_code"] != float64(0) || m["content"] != "true" {
		t.Errorf("foreground status %s", st.body)
	}
	if _, ok := m["error"]; ok {
		t.Errorf("success has an error: %s", st.body)
	}
}

// startStreaming posts a command and reads its stream until the first
// output, which it returns with the execution id and the open reader.
func startStreaming(t *testing.T, url string, body any) (id, first string, r *client.EventReader, closeFn func()) {
	t.Helper()
	resp := open(t, "POST", url, body)
	r = client.NewEventReader(resp.Body)
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("stream ended before output: %v", err)
		}
		switch ev.Type {
		case client.EventInit:
			id = ev.Text
		case client.EventStdout:
			return id, string(ev.Data), r, func() { resp.Body.Close() }
		}
	}
}

func rest(t *testing.T, r *client.EventReader) streamSummary {
	t.Helper()
	var evs []*client.Event
	for {
		ev, err := r.Next()
		if err != nil {
			return summarize(evs)
		}
		evs = append(evs, ev)
	}
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		// A command that dies of SIGTERM.
		id, first, r, closeFn := startStreaming(t, url+"/command", map[string]any{"command": "echo started; exec sleep 100"})
		defer closeFn()
		if first != "started" {
			t.Fatalf("first output %q", first)
		}
		if d := call(t, "DELETE", url+"/command?id="+id, nil); d.status != 200 || d.body != "" {
			t.Fatalf("interrupt: %d %s", d.status, d.body)
		}
		if s := rest(t, r); s.end != `error/CommandExecError/-1/["signal: terminated"]` {
			t.Errorf("after interrupt: %+v", s)
		}
		// One that ignores it is killed after the grace period.
		id, _, r2, close2 := startStreaming(t, url+"/command", map[string]any{"command": "trap '' TERM; echo started; sleep 100; echo survived"})
		defer close2()
		call(t, "DELETE", url+"/command?id="+id, nil)
		if s := rest(t, r2); s.end != `error/CommandExecError/-1/["signal: killed"]` || s.stdout != "" {
			t.Errorf("after interrupt of a TERM-ignoring command: %+v", s)
		}
		if st := waitFinished(t, url, id); st["exit_code"] != float64(-1) || st["error"] != "signal: killed" {
			t.Errorf("status %v", st)
		}
	})
}

func TestSandboxKillEndsCommands(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		bg := summarize(events(t, url+"/command", map[string]any{"command": "sleep 1000", "background": true}))
		sid := createSession(t, url, nil)
		if s := summarize(events(t, url+"/session/"+sid+"/run", map[string]any{"command": "sleep 1000 &"})); s.end != "execution_complete" {
			t.Fatalf("session run %+v", s)
		}
		if len(sb.PIDs()) == 0 {
			t.Fatal("no sandbox processes")
		}
		if err := sb.Kill(); err != nil {
			t.Fatal(err)
		}
		if pids := sb.PIDs(); len(pids) != 0 {
			t.Errorf("processes left after kill: %v", pids)
		}
		if sb.AgentSocket() != "" {
			return // execd ran inside the sandbox and ended with it
		}
		if st := waitFinished(t, url, bg.id); st["exit_code"] != float64(-1) {
			t.Errorf("background command after kill: %v", st)
		}
	})
}

// TestInterruptEndsChildrenInTheirOwnSession: interrupting a command (what
// Ctrl-C on `osb command run` does) also ends what it started in a session
// of its own (setsid), which its process group does not hold.
func TestInterruptEndsChildrenInTheirOwnSession(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		// The second child ignores SIGTERM: after its parent has died it is
		// no one's descendant, yet must still get the SIGKILL.
		marker := "4711" + strconv.Itoa(os.Getpid())
		command := "setsid sleep " + marker + " & setsid sh -c 'trap \"\" TERM; while :; do sleep 0.1; done' " + marker + " & echo started; wait"
		id, first, r, closeFn := startStreaming(t, url+"/command", map[string]any{"command": command})
		defer closeFn()
		if first != "started" {
			t.Fatalf("first output %q", first)
		}
		if d := call(t, "DELETE", url+"/command?id="+id, nil); d.status != 200 {
			t.Fatalf("interrupt: %d %s", d.status, d.body)
		}
		rest(t, r)
		for _, pid := range sb.PIDs() {
			if cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), marker) {
				t.Errorf("the setsid child %d (%s) outlived the interrupt", pid, marker)
			}
		}
	})
}
