package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// background starts a background command through our server's API and
// returns its execution id.
func (h *harness) background(t *testing.T, id, command string) string {
	t.Helper()
	out := h.ours.Must("command", "run", id, "-d", "-o", "json", "--", "sh", "-c", command)
	var v struct {
		ExecutionID string `json:"execution_id"`
	}
	decodeInto(t, []byte(out), &v)
	return v.ExecutionID
}

// finished waits until the server reports a command as no longer running.
func (h *harness) finished(t *testing.T, id, eid string) {
	t.Helper()
	cmdtest.Eventually(t, "command "+eid+" to finish", func() bool {
		out := h.ours.Must("command", "status", id, eid, "-o", "json")
		return strings.Contains(out, `"running": false`)
	})
}

func TestOfficialCLICommands(t *testing.T) {
	h := start(t)
	id := h.sandbox(t, nil)

	t.Run("line framing", func(t *testing.T) {
		// A real execd sends one event per line without its terminator, a
		// blank line as "\n", and the last partial line at exit
		// (execd-observed.md §3.1). The official CLI writes each event's text
		// as it is and adds a newline at the end when the last one lacked it,
		// so against the real platform its lines run together exactly so.
		// Ours prints each event as a line.
		const script = `echo a; echo; printf 'b\r\nc\n'; printf tail`
		if r := h.official(t, "command", "run", id, "--", "sh", "-c", script); r.Code != 0 || r.Stdout != "a"+"\n"+"b"+"c"+"tail"+"\n" {
			t.Errorf("official CLI: exit %d, stdout %q; want the events a, \\n, b, c, tail as a real execd frames them", r.Code, r.Stdout)
		}
		if r := h.ours.Run("command", "run", id, "--", "sh", "-c", script); r.Code != 0 || r.Stdout != "a\n\nb\nc\ntail\n" {
			t.Errorf("our CLI: exit %d, stdout %q", r.Code, r.Stdout)
		}
	})
	t.Run("foreground failure", func(t *testing.T) {
		r := h.official(t, "command", "run", id, "--", "sh", "-c", "echo out; echo err >&2; exit 3")
		if r.Code != 1 || r.Stdout != "out\n" || !strings.HasPrefix(r.Stderr, "err\n") || !strings.Contains(r.Stderr, "CommandExecError: 3") {
			t.Errorf("official CLI on exit 3: code %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		ours := h.ours.Run("command", "run", id, "--", "sh", "-c", "echo out; echo err >&2; exit 3")
		if ours.Stdout != r.Stdout || ours.Code != 3 {
			t.Errorf("ours on exit 3: code %d stdout %q", ours.Code, ours.Stdout)
		}
	})
	t.Run("argv", func(t *testing.T) {
		h.sameRaw(t, "command", "run", id, "--argv", "--", "printf", "%s|", "a b", "$HOME")
	})
	t.Run("workdir", func(t *testing.T) {
		out := h.sameRaw(t, "command", "run", id, "-w", "/tmp", "--", "sh", "-c", `echo "$(pwd) $0"`)
		if out != "/tmp sh\n" {
			t.Errorf("official CLI printed %q", out)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		r := h.official(t, "command", "run", id, "-t", "1s", "--", "sleep", "300")
		if r.Code != 1 || !strings.Contains(r.Stderr, "CommandExecError: -1") {
			t.Errorf("official CLI on a command past its timeout: exit %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("background", func(t *testing.T) {
		h.compare(t, twin{id, id}, cmp{
			args: args("command", "run", "ID", "-d", "--", "sh", "-c", "echo started"),
			vary: map[string]string{"execution_id": "each run is a new command"},
		})
		out := h.officialOK(t, "command", "run", id, "-d", "-o", "json", "--", "sh", "-c", "echo one; echo two >&2; exit 4")
		var v struct {
			ExecutionID string `json:"execution_id"`
		}
		decodeInto(t, []byte(out), &v)
		h.finished(t, id, v.ExecutionID)
		h.same(t, v.ExecutionID, cmp{args: func(eid string) []string { return []string{"command", "status", id, eid} }})
		h.same(t, v.ExecutionID, cmp{args: func(eid string) []string { return []string{"command", "logs", id, eid} }})
		h.same(t, v.ExecutionID, cmp{args: func(eid string) []string { return []string{"command", "logs", id, eid, "--cursor", "4"} }})
		// The official CLI ends the log with a newline of its own.
		if raw := h.sameRaw(t, "command", "logs", id, v.ExecutionID, "-o", "raw"); raw != "one\ntwo\n\n" {
			t.Errorf("official logs -o raw printed %q", raw)
		}
	})

	t.Run("status times", func(t *testing.T) {
		// A time whose microseconds end in zero shows how each CLI prints
		// it: the official one always with six digits. Such a command
		// comes along about once in ten.
		for range 200 {
			eid := h.background(t, id, "true")
			h.finished(t, id, eid)
			var st struct {
				StartedAt  string `json:"started_at"`
				FinishedAt string `json:"finished_at"`
			}
			decodeInto(t, []byte(h.ours.Must("command", "status", id, eid, "-o", "json")), &st)
			if microZero(st.StartedAt) || microZero(st.FinishedAt) {
				h.same(t, eid, cmp{args: func(eid string) []string { return []string{"command", "status", id, eid} }})
				return
			}
		}
		t.Fatal("no command in 200 started or finished on a microsecond ending in zero")
	})
	t.Run("interrupt", func(t *testing.T) {
		eids := twin{h.background(t, id, "sleep 300"), h.background(t, id, "sleep 300")}
		h.compare(t, eids, cmp{args: func(eid string) []string { return []string{"command", "interrupt", id, eid} }, label: "<EXECUTION>"})
		for _, eid := range eids {
			h.finished(t, id, eid)
		}
	})

	t.Run("sessions", func(t *testing.T) {
		h.compare(t, twin{id, id}, cmp{
			args: args("command", "session", "create", "ID", "--workdir", "/tmp"),
			vary: map[string]string{"session_id": "each create makes a new session"},
		})
		out := h.officialOK(t, "command", "session", "create", id, "-o", "json")
		var s struct {
			SessionID string `json:"session_id"`
		}
		decodeInto(t, []byte(out), &s)
		h.officialOK(t, "command", "session", "run", id, s.SessionID, "--", "cd", "/tmp")
		h.officialOK(t, "command", "session", "run", id, s.SessionID, "--", "export", "GREETING=hello")
		got := h.sameRaw(t, "command", "session", "run", id, s.SessionID, "--", "sh", "-c", `echo "$(pwd) $GREETING"`)
		if got != "/tmp hello\n" {
			t.Errorf("session kept no state: %q", got)
		}
		if got := h.sameRaw(t, "command", "session", "run", id, s.SessionID, "-w", "/workspace", "--", "pwd"); got != "/workspace\n" {
			t.Errorf("session run -w printed %q", got)
		}
		sessions := twin{s.SessionID, newSession(t, h, id)}
		h.compare(t, sessions, cmp{args: func(sid string) []string { return []string{"command", "session", "delete", id, sid} }, label: "<SESSION>"})
		if r := h.ours.Run("command", "session", "run", id, s.SessionID, "--", "true"); r.Code == 0 {
			t.Errorf("the session still runs commands after the official delete")
		}
	})
}

func newSession(t *testing.T, h *harness, id string) string {
	t.Helper()
	var s struct {
		SessionID string `json:"session_id"`
	}
	decodeInto(t, []byte(h.ours.Must("command", "session", "create", id, "-o", "json")), &s)
	return s.SessionID
}

// microZero tells whether an RFC 3339 time, read as a time, has a
// microsecond count ending in zero.
func microZero(ts string) bool {
	tm, err := time.Parse(time.RFC3339Nano, ts)
	return err == nil && tm.Nanosecond()/1000%10 == 0
}

// Through the lifecycle server's proxy (--use-server-proxy), the data plane
// answers as it does directly.
func TestOfficialCLIServerProxy(t *testing.T) {
	h := start(t)
	id := h.sandbox(t, nil)
	proxied := func(words ...string) func(string) []string {
		return func(obj string) []string { return append([]string{"--use-server-proxy"}, args(words...)(obj)...) }
	}
	off, _ := h.same(t, id, cmp{args: proxied("sandbox", "endpoint", "ID", "--port", "44772")})
	if ep := render(off); !strings.Contains(ep, `"`+h.ours.Server.Addr()+"/sandboxes/<ID>/proxy/44772\"") {
		t.Errorf("proxied endpoint: %s", ep)
	}
	if got := h.sameRaw(t, "--use-server-proxy", "command", "run", id, "--", "echo", "via the proxy"); got != "via the proxy\n" {
		t.Errorf("command through the proxy printed %q", got)
	}
	h.same(t, id, cmp{args: proxied("file", "write", "ID", "/workspace/p.txt", "-c", "proxied")})
	if got := h.sameRaw(t, "--use-server-proxy", "file", "cat", id, "/workspace/p.txt"); got != "proxied" {
		t.Errorf("cat through the proxy printed %q", got)
	}
	h.same(t, id, cmp{args: proxied("egress", "get", "ID")})
	h.same(t, id, cmp{args: proxied("sandbox", "health", "ID")})
}
