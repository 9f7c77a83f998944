package command_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdtest"
)

// waitDone polls `command status` until the command has finished.
func waitDone(t *testing.T, env *cmdtest.Env, sb, id string, global ...string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out := env.Must(append(global, "command", "status", sb, id, "-o", "json")...)
		var st struct{ Running bool }
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatal(err)
		}
		if !st.Running {
			return
		}
	}
	t.Fatalf("command %s still running", id)
}

const gated = `echo first; while [ ! -e go ]; do sleep 0.02; done; echo second >&2; printf tail; exit 4`

func TestStatusAndLogs(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	id := backgroundID(t, env, "--no-use-server-proxy", sb, gated)
	labels := map[string]string{id: "<EXEC>", sb: "<SANDBOX>"}
	golden := func(name string, r cmdtest.Result) {
		t.Helper()
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", name, r.Code, r.Stderr)
		}
		cmdtest.Golden(t, name, cmdtest.Normalize(r.Stdout, labels))
	}
	golden("status-running-json", env.Run("command", "status", sb, id, "-o", "json"))
	env.Must("command", "run", sb, "--", "touch", "go")
	waitDone(t, env, sb, id)
	golden("status-table", env.Run("command", "status", sb, id))
	golden("status-json", env.Run("command", "status", sb, id, "-o", "json"))
	golden("status-yaml", env.Run("command", "status", sb, id, "-o", "yaml"))
	// Times as the official client prints what execd wrote: to the microsecond.
	var wire struct {
		StartedAt  string `json:"started_at"`
		FinishedAt string `json:"finished_at"`
	}
	if err := json.Unmarshal([]byte(execdGet(t, env, sb, "/command/status/"+id)), &wire); err != nil || wire.FinishedAt == "" {
		t.Fatalf("execd status: %v %+v", err, wire)
	}
	for _, q := range [][2]string{{"started_at", wire.StartedAt}, {"finished_at", wire.FinishedAt}} {
		if got, want := strings.TrimSpace(env.Must("command", "status", sb, id, "-q", q[0])), client.ParseTime(q[1]).String(); got != want || len(got) != len("2006-01-02T15:04:05.000000Z") && len(got) != len("2006-01-02T15:04:05Z") {
			t.Errorf("%s %q, execd sent %q, want %q", q[0], got, q[1], want)
		}
	}

	all := "first\nsecond\ntail"
	expect(t, env.Run("command", "logs", sb, id, "-o", "raw"), 0, all+"\n", "")
	expect(t, env.Run("command", "logs", sb, id), 0, "--- Command Logs ---\n"+all+"\n", "")
	expect(t, env.Run("command", "logs", sb, id, "-o", "json"), 0, "{\n  \"content\": \"first\\nsecond\\ntail\",\n  \"cursor\": 17\n}\n", "")
	expect(t, env.Run("command", "logs", sb, id, "-o", "yaml", "--cursor", "6"), 0, "content: |-\n  second\n  tail\ncursor: 17\n", "")
	expect(t, env.Run("command", "logs", sb, id, "-o", "json", "--cursor", "17"), 0, "{\n  \"content\": \"\",\n  \"cursor\": 17\n}\n", "")
	expect(t, env.Run("-v", "command", "logs", sb, id, "--cursor", "-1"), 2, "", "Error: invalid value for '--cursor': -1 is negative\n")

	r := env.Run("command", "status", sb, "nope")
	if r.Code != 4 || !strings.HasPrefix(r.Stderr, "Error: command not found: nope (HTTP 404") {
		t.Errorf("unknown id: %d %q", r.Code, r.Stderr)
	}
	fg := env.Must("command", "run", sb, "-o", "json", "--", "true")
	var res struct {
		ExecutionID string `json:"execution_id"`
	}
	json.Unmarshal([]byte(fg), &res)
	expect(t, env.Run("command", "logs", sb, res.ExecutionID), 1, "",
		"Error: command "+res.ExecutionID+" is not running in background (HTTP 400, code INVALID_REQUEST_BODY)\n")
}

func TestLogsFollow(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	id := backgroundID(t, env, "--no-use-server-proxy", sb, gated)
	p := startPiped(t, env, "command", "logs", sb, id, "--follow")
	// The first line shows while the command still waits for its go.
	if got := p.line(t); got != "first\n" {
		t.Fatalf("first line %q", got)
	}
	env.Must("command", "run", sb, "--", "touch", "go")
	// It ends with the command's own exit code (4), printing nothing more.
	code, rest := p.wait(t)
	if code != 4 || rest != "second\ntail\n" || p.stderr.String() != "" {
		t.Errorf("follow: exit %d, rest %q, stderr %q", code, rest, p.stderr.String())
	}
	// JSON lines: each read with its cursor; together, each byte once.
	r := env.Run("command", "logs", sb, id, "--follow", "-o", "json", "--cursor", "6")
	var content string
	var cursor float64
	for _, line := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
		var v struct {
			Content string
			Cursor  float64
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		content, cursor = content+v.Content, v.Cursor
	}
	if r.Code != 4 || r.Stderr != "" || content != "second\ntail" || cursor != 17 {
		t.Errorf("json follow: %d %q", r.Code, r.Stdout)
	}
	expect(t, env.Run("command", "logs", sb, id, "--follow", "-o", "yaml"), 2, "",
		"exit_code: 2\nmessage: --follow prints raw output or json lines; it cannot be combined with -o yaml\nstatus: error\n")
}

func TestInterruptCommand(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	id := backgroundID(t, env, "--no-use-server-proxy", sb, "sleep 1000")
	expect(t, env.Run("command", "interrupt", sb, id), 0, "OK: Interrupted: "+id+"\n", "")
	out := env.Must("command", "status", sb, id, "-o", "json")
	var st struct {
		Running  bool
		ExitCode *int `json:"exit_code"`
		Error    string
	}
	json.Unmarshal([]byte(out), &st)
	if st.Running || st.ExitCode == nil || *st.ExitCode != -1 || st.Error != "signal: terminated" {
		t.Errorf("status after interrupt: %s", out)
	}
	r := env.Run("command", "interrupt", sb, id, "-o", "json")
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, `"message": "error interruptting code context. command session `+id+` is not running`) {
		t.Errorf("second interrupt: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
}

// execdGet asks a sandbox's execd for path directly (not through osb), at
// the endpoint and with the headers the lifecycle API hands out.
func execdGet(t *testing.T, env *cmdtest.Env, sb, path string) string {
	t.Helper()
	var ep struct {
		Endpoint string
		Headers  map[string]string
	}
	if err := json.Unmarshal([]byte(env.Must("sandbox", "endpoint", sb, "-p", "44772", "-o", "json")), &ep); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+ep.Endpoint+path, nil)
	for k, v := range ep.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
