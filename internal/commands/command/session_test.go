package command_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestSessionCommands(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	r := env.Run("command", "session", "create", sb, "-w", "/workspace/app")
	m := regexp.MustCompile(`^--- Session Created ---\n  sandbox_id: ` + sb + `\n  session_id: ([0-9a-f-]{36})\n  working_directory: /workspace/app\n$`).FindStringSubmatch(r.Stdout)
	if r.Code != 0 || m == nil {
		t.Fatalf("create: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	sid := m[1]
	run := func(args ...string) []string { return append([]string{"command", "session", "run", sb, sid}, args...) }
	// State carries over: the directory, exported variables.
	expect(t, env.Run(run("--", "sh", "-c", "true")...), 0, "", "")
	expect(t, env.Run(run("--", "mkdir", "-p", "sub")...), 0, "", "")
	expect(t, env.Run(run("--", "cd", "sub")...), 0, "", "")
	expect(t, env.Run(run("--", "export", "GREETING=hello there")...), 0, "", "")
	expect(t, env.Run(run("--", "echo", "$GREETING")...), 0, "$GREETING\n", "") // quoted: not expanded
	expect(t, env.Run(run("--", "sh", "-c", `echo "$GREETING from $(basename "$PWD")"`)...), 0, "hello there from sub\n", "")
	// stderr arrives as stdout; exit codes are the command's own.
	expect(t, env.Run(run("--", "sh", "-c", "echo oops >&2; exit 5")...), 5, "oops\n", "")
	// The shell's own exit ends the run, not the session.
	expect(t, env.Run(run("--", "exit", "6")...), 6, "", "")
	expect(t, env.Run(run("--", "sh", "-c", `echo "$GREETING in $(basename "$PWD")"`)...), 0, "hello there in sub\n", "")
	expect(t, env.Run(run("-w", "/tmp", "--", "sh", "-c", `basename "$PWD"`)...), 0, "tmp\n", "")
	expect(t, env.Run(run("-t", "1s", "--", "sleep", "30")...), 124, "",
		"Error: the command did not finish within 1s and was stopped (error running in session. timeout after 1s)\n")
	expect(t, env.Run(run("--", "sh", "-c", `basename "$PWD"`)...), 0, "tmp\n", "")

	r = env.Run(run("-o", "json", "--", "sh", "-c", "echo out; exit 2")...)
	var res map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 2 || res["execution_id"] != sid || res["exit_code"] != 2.0 || res["stdout"] != "out\n" {
		t.Errorf("json: %d %q %v", r.Code, r.Stdout, err)
	}
	expect(t, env.Run(run("-o", "table", "--", "true")...), 2, "", "Error: This command does not support `-o table`. Allowed values: raw, json.\n")

	expect(t, env.Run("command", "session", "delete", sb, sid), 0, "OK: Deleted session: "+sid+"\n", "")
	r = env.Run(run("--", "true")...)
	if r.Code != 125 || !strings.HasPrefix(r.Stderr, "Error: error running in session. context not found (HTTP 500") {
		t.Errorf("run after delete: %d %q", r.Code, r.Stderr)
	}
	r = env.Run("command", "session", "delete", sb, sid)
	if r.Code != 4 || !strings.HasPrefix(r.Stderr, "Error: session "+sid+" not found (HTTP 404") {
		t.Errorf("delete twice: %d %q", r.Code, r.Stderr)
	}

	r = env.Run("command", "session", "create", sb, "-o", "json")
	var created map[string]any
	json.Unmarshal([]byte(r.Stdout), &created)
	if r.Code != 0 || created["sandbox_id"] != sb || created["working_directory"] != nil || !strings.HasPrefix(r.Stdout, "{\n  \"sandbox_id\"") {
		t.Errorf("create json: %q", r.Stdout)
	}
	r = env.Run("command", "session", "delete", sb, created["session_id"].(string), "-o", "json")
	if r.Stdout != "{\n  \"status\": \"ok\",\n  \"message\": \"Deleted session: "+created["session_id"].(string)+"\"\n}\n" {
		t.Errorf("delete json: %q", r.Stdout)
	}
}
