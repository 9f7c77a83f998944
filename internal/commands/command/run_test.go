package command_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	run := func(args ...string) cmdtest.Result {
		return env.Run(append([]string{"command", "run", sb}, args...)...)
	}
	expect(t, run("--", "true"), 0, "", "")
	expect(t, run("--", "sh", "-c", "echo out; exit 3"), 3, "out\n", "")
	r := run("--", "nonexistent-cmd-xyz")
	if r.Code != 127 || r.Stdout != "" || !strings.HasSuffix(r.Stderr, "nonexistent-cmd-xyz: command not found\n") {
		t.Errorf("unknown command: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	// What the command printed before its timeout is kept. The timeout
	// runs from the start of sh, so it leaves a loaded machine ample time
	// to print; it runs beside the rest.
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		expect(t, run("-t", "10s", "--", "sh", "-c", "echo started; sleep 60"), 124, "started\n",
			"Error: the command did not finish within 10s and was killed\n")
	})
	expect(t, run("--", "sh", "-c", "kill -9 $$"), 137, "", "Error: the command was killed (signal: killed)\n")
	expect(t, run("--argv", "--", "nonexistent-program-xyz"), 125, "",
		"Error: the command could not start: exec: \"nonexistent-program-xyz\": executable file not found in $PATH\n")
	// Failures of osb itself are 125 too, so they never pass for a remote code.
	r = run("-w", "/nonexistent", "--", "true")
	if r.Code != 125 || !strings.HasPrefix(r.Stderr, "Error: invalid request, validation error working directory does not exist: /nonexistent (HTTP 400") {
		t.Errorf("bad workdir: %d %q", r.Code, r.Stderr)
	}
	r = env.Run("command", "run", "no-such-sandbox", "--", "true")
	notFound := regexp.MustCompile(`^Error: Sandbox no-such-sandbox not found\. \(HTTP 404, code DOCKER::SANDBOX_NOT_FOUND, request id [0-9a-f-]+\); 'osb sandbox list' shows the sandboxes there are\n$`)
	if r.Code != 125 || r.Stdout != "" || !notFound.MatchString(r.Stderr) {
		t.Errorf("unknown sandbox: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
}

func TestRunOutput(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	run := func(args ...string) cmdtest.Result {
		return env.Run(append([]string{"command", "run", sb, "--"}, args...)...)
	}
	// Each stream keeps its own bytes and order.
	expect(t, run("sh", "-c", "for i in 1 2 3; do echo out$i; echo err$i >&2; done"), 0, "out1\nout2\nout3\n", "err1\nerr2\nerr3\n")
	// Lines as execd sends them, one event each, each printed with a
	// newline: \r\n and \r end lines too, a missing final newline is
	// added, invalid UTF-8 is kept as it was.
	expect(t, run("printf", `a\r\nb`), 0, "a\nb\n", "")
	expect(t, run("printf", `a\n\nb\r\nc\rd`), 0, "a\n\nb\nc\nd\n", "")
	expect(t, run("printf", `caf\351 \377\376\n`), 0, "caf\xe9 \xff\xfe\n", "")
	expect(t, run("printf", `%s`, "no newline"), 0, "no newline\n", "")
	expect(t, run("sh", "-c", "printf '\\n\\n'"), 0, "\n\n", "")
	// Arguments are quoted for the shell: nothing is expanded twice.
	expect(t, run("sh", "-c", `printf '[%s]' "$@"`, "x", "a b", "$HOME", "it's", ""), 0, "[a b][$HOME][it's][]\n", "")
	// --argv runs no shell at all.
	expect(t, env.Run("command", "run", sb, "--argv", "--", "printf", "[%s]", "*", "$HOME"), 0, "[*][$HOME]\n", "")
}

func TestRunEnvWorkdirUser(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	r := env.Run("command", "run", sb, "-e", "FOO=bar", "-e", "EMPTY=", "-e", "FOO=baz=1", "-w", "/tmp", "--",
		"sh", "-c", `echo "$FOO|$EMPTY|$(basename "$PWD")"`)
	expect(t, r, 0, "baz=1||tmp\n", "")
	if !env.Server.Isolated() {
		t.Skip("--user needs sandboxes in namespaces here (an unisolated sandbox lives in a private temp dir)")
	}
	expect(t, env.Run("command", "run", sb, "-u", "65534:65533", "--", "sh", "-c", "id -u; id -g"), 0, "65534\n65533\n", "")
	expect(t, env.Run("command", "run", sb, "-u", "65534", "--", "id", "-u"), 0, "65534\n", "")
}

func TestRunShowsOutputAsItComes(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	p := startPiped(t, env, "command", "run", sb, "--", "sh", "-c", "echo first; while [ ! -e gate ]; do sleep 0.02; done; echo second")
	// The first line arrives while the command still waits for its gate.
	if got := p.line(t); got != "first\n" {
		t.Fatalf("first line %q", got)
	}
	env.Must("command", "run", sb, "--", "touch", "gate")
	if code, rest := p.wait(t); code != 0 || rest != "second\n" || p.stderr.String() != "" {
		t.Errorf("exit %d, rest %q, stderr %q", code, rest, p.stderr.String())
	}
}

func TestRunUsageErrorsSendNothing(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"-o", "table", "--", "true"}, "Error: This command does not support `-o table`. Allowed values: raw, json.\n"},
		// Under -o yaml (and json) errors are objects on stderr.
		{[]string{"-o", "yaml", "--", "true"}, "exit_code: 2\nmessage: 'This command does not support `-o yaml`. Allowed values: raw, json.'\nstatus: error\n"},
		{[]string{"-d", "-o", "raw", "--", "true"}, "Error: This command does not support `-o raw`. Allowed values: table, json, yaml.\n"},
		{[]string{"-u", "root", "--", "true"}, "Error: invalid value for '--user': expected UID or UID:GID (numbers), got 'root'\n"},
		{[]string{"-u", "1:", "--", "true"}, "Error: invalid value for '--user': expected UID or UID:GID (numbers), got '1:'\n"},
		{[]string{"-e", "=x", "--", "true"}, "Error: invalid argument \"=x\" for \"-e, --env\" flag: the KEY before '=' is empty (see 'osb command run --help')\n"},
		{[]string{"-e", "novalue", "--", "true"}, "Error: invalid argument \"novalue\" for \"-e, --env\" flag: expected KEY=VALUE format, got 'novalue' (see 'osb command run --help')\n"},
		{[]string{"-t", "5x", "--", "true"}, "Error: invalid argument \"5x\" for \"-t, --timeout\" flag: invalid duration '5x'. Use format like 10m, 1h30m, 90s (see 'osb command run --help')\n"},
		{[]string{}, "Error: missing the command to run: osb command run SANDBOX_ID -- COMMAND... (see 'osb command run --help')\n"},
		{[]string{"ls", "-la"}, "Error: unknown shorthand flag: 'l' in -la; put -- before the command if the option is its own (see 'osb command run --help')\n"},
	}
	for _, c := range cases {
		// -v logs every HTTP request: the error must be all there is.
		r := env.Run(append([]string{"-v", "command", "run", sb}, c.args...)...)
		expect(t, r, 2, "", c.err)
	}
}

var idRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestRunJSONResult(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	r := env.Run("command", "run", sb, "-o", "json", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
	if r.Code != 3 || r.Stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	keys := regexp.MustCompile(`(?m)^  "(\w+)"`).FindAllStringSubmatch(r.Stdout, -1)
	var order []string
	for _, k := range keys {
		order = append(order, k[1])
	}
	if strings.Join(order, ",") != "execution_id,exit_code,stdout,stderr,error,duration" {
		t.Errorf("keys %v", order)
	}
	errObj, _ := json.Marshal(res["error"])
	if !idRE.MatchString(res["execution_id"].(string)) || res["exit_code"] != 3.0 || res["stdout"] != "out\n" || res["stderr"] != "err\n" ||
		string(errObj) != `{"name":"CommandExecError","traceback":["exit status 3"],"value":"3"}` || res["duration"].(float64) < 0 {
		t.Errorf("result %s", r.Stdout)
	}
	r = env.Run("command", "run", sb, "-o", "json", "--", "echo", "hi")
	res = nil // a fresh result: nothing may carry over from the failure above
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	if _, ok := res["error"]; !ok {
		t.Errorf("success lacks \"error\": null: %s", r.Stdout)
	}
	if r.Code != 0 || res["exit_code"] != 0.0 || res["error"] != nil || res["stdout"] != "hi\n" || res["stderr"] != "" {
		t.Errorf("success: %d %s", r.Code, r.Stdout)
	}
	// A failure before the command ran: the error object on stderr only.
	r = env.Run("command", "run", sb, "-o", "json", "-w", "/nonexistent", "--", "true")
	if r.Code != 125 || r.Stdout != "" || !strings.Contains(r.Stderr, `"exit_code": 125`) || !strings.Contains(r.Stderr, `"http_status": 400`) {
		t.Errorf("failure: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
}

func TestRunBackground(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	r := env.Run("command", "run", sb, "-d", "--", "sh", "-c", "echo started")
	m := regexp.MustCompile(`^--- Background Command Started ---\n  execution_id: ([0-9a-f]{32})\n  sandbox_id: ` + sb + `\n  mode: background\n$`).FindStringSubmatch(r.Stdout)
	if r.Code != 0 || m == nil || r.Stderr != "" {
		t.Fatalf("table: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	r = env.Run("command", "run", sb, "-d", "-o", "json", "--", "true")
	var v map[string]string
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil || !idRE.MatchString(v["execution_id"]) || v["sandbox_id"] != sb || v["mode"] != "background" ||
		!strings.HasPrefix(r.Stdout, "{\n  \"execution_id\"") {
		t.Errorf("json: %q", r.Stdout)
	}
	r = env.Run("command", "run", sb, "-d", "-o", "yaml", "--", "true")
	if !regexp.MustCompile(`^execution_id: [0-9a-f]{32}\nmode: background\nsandbox_id: ` + sb + "\n$").MatchString(r.Stdout) {
		t.Errorf("yaml: %q", r.Stdout)
	}
	// A background start failure is reported, not passed off as started.
	expect(t, env.Run("command", "run", sb, "-d", "--argv", "--", "nonexistent-program-xyz"), 1, "",
		"Error: the command could not start: exec: \"nonexistent-program-xyz\": executable file not found in $PATH\n")
}

func TestRunThroughProxyWithEndpointHeaders(t *testing.T) {
	t.Parallel()
	// Every data-plane request needs the endpoint's token header; through
	// the server proxy the endpoint also carries a path prefix.
	env, sb := newSandbox(t)
	for _, proxy := range []string{"--no-use-server-proxy", "--use-server-proxy"} {
		expect(t, env.Run(proxy, "command", "run", sb, "--", "sh", "-c", "echo hi; echo err >&2"), 0, "hi\n", "err\n")
		id := backgroundID(t, env, proxy, sb, "echo bg")
		waitDone(t, env, sb, id, proxy)
		expect(t, env.Run(proxy, "command", "logs", sb, id, "-o", "raw"), 0, "bg\n\n", "")
		sid := sessionID(t, env, proxy, sb)
		expect(t, env.Run(proxy, "command", "session", "run", sb, sid, "--", "echo", "in-session"), 0, "in-session\n", "")
		expect(t, env.Run(proxy, "command", "session", "delete", sb, sid), 0, "OK: Deleted session: "+sid+"\n", "")
	}
}

func backgroundID(t *testing.T, env *cmdtest.Env, global, sb, script string) string {
	t.Helper()
	out := env.Must(global, "command", "run", sb, "-d", "-o", "json", "--", "sh", "-c", script)
	var v struct {
		ExecutionID string `json:"execution_id"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ExecutionID == "" {
		t.Fatalf("no execution id: %v %s", err, out)
	}
	return v.ExecutionID
}

func sessionID(t *testing.T, env *cmdtest.Env, global, sb string, args ...string) string {
	t.Helper()
	out := env.Must(append([]string{global, "command", "session", "create", sb, "-o", "json"}, args...)...)
	var v struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.SessionID == "" {
		t.Fatalf("no session id: %v %s", err, out)
	}
	return v.SessionID
}

// A paused sandbox's execd answers 409: osb says so, and exits 125 as for
// any failure before the command ran. Once resumed, what was running goes
// on and can finish (and the sandbox can be closed: the test server checks).
func TestRunOnPausedSandbox(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	sid := sessionID(t, env, "--no-use-server-proxy", sb)
	id := backgroundID(t, env, "--no-use-server-proxy", sb, "while [ ! -e gate ]; do sleep 0.02; done; echo through")
	env.Must("sandbox", "pause", sb)
	paused := "Error: Sandbox " + sb + " is paused; resume it first. (HTTP 409, code DOCKER::SANDBOX_NOT_RUNNING)\n"
	expect(t, env.Run("command", "run", sb, "--", "true"), 125, "", paused)
	expect(t, env.Run("command", "session", "run", sb, sid, "--", "true"), 125, "", paused)
	env.Must("sandbox", "resume", sb)
	expect(t, env.Run("command", "run", sb, "--", "touch", "gate"), 0, "", "")
	waitDone(t, env, sb, id)
	expect(t, env.Run("command", "logs", sb, id, "-o", "raw"), 0, "through\n\n", "")
	expect(t, env.Run("command", "session", "run", sb, sid, "--", "echo", "back"), 0, "back\n", "")
}
