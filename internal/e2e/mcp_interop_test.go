package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	osbmcp "github.com/osb-dev/osb/internal/mcp"
)

// interopEnv names the directory scripts/interop-setup installed the
// official clients into, the Python MCP client and opensandbox-mcp among
// them; `make interop` sets it.
const interopEnv = "OSB_INTEROP_DIR"

// mcpPython returns the virtualenv's python, or skips the test when the
// suite was not asked for.
func mcpPython(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(interopEnv)
	if dir == "" {
		t.Skip("the official MCP clients are not installed here; `make interop` installs them and runs this test")
	}
	py := filepath.Join(dir, "venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("%s=%s has no virtualenv (%v); run scripts/interop-setup", interopEnv, dir, err)
	}
	return py
}

// driver runs testdata/mcp_driver.py and decodes what it printed.
func driver(t *testing.T, py string, env []string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "mcp_driver.py")}, args...)...)
	cmd.Env = append(env, "LANG=C.UTF-8")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp_driver.py %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("mcp_driver.py %s printed %q: %v", strings.Join(args, " "), stdout.String(), err)
	}
}

// The official opensandbox-mcp 1.1.1 and `osb mcp` list the same tools with
// the same arguments: names, types, defaults, which are required and which
// may be null, down to nested objects.
func TestMCPInteropToolsMatchOfficialServer(t *testing.T) {
	t.Parallel()
	py := mcpPython(t)
	bin := buildOsb(t)
	env := clientEnv(t.TempDir(), "127.0.0.1:1", "unused-key")
	var ours, official map[string]map[string]any
	driver(t, py, env, &ours, "tools", bin, "mcp")
	driver(t, py, env, &official, "tools", filepath.Join(filepath.Dir(py), "opensandbox-mcp"))
	names := func(m map[string]map[string]any) []string {
		var n []string
		for k := range m {
			n = append(n, k)
		}
		sort.Strings(n)
		return n
	}
	if !slices.Equal(names(ours), names(official)) {
		t.Fatalf("tools differ:\nours     %v\nofficial %v", names(ours), names(official))
	}
	for name, theirs := range official {
		got, want := canonSchema(ours[name]), canonSchema(theirs)
		if g, w := mustJSON(got), mustJSON(want); g != w {
			t.Errorf("%s: the arguments differ\nours:     %s\nofficial: %s", name, g, w)
		}
	}
	t.Logf("%d tools compared", len(official))
}

// canonSchema is what of a JSON schema a caller depends on: types, nesting,
// defaults, required and enum values, with references resolved and
// descriptions and titles left out.
func canonSchema(schema map[string]any) any {
	defs, _ := schema["$defs"].(map[string]any)
	return canon(schema, defs)
}

func canon(v any, defs map[string]any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if ref, ok := s["$ref"].(string); ok {
		return canon(defs[strings.TrimPrefix(ref, "#/$defs/")], defs)
	}
	out := map[string]any{}
	for k, x := range s {
		switch k {
		case "type", "default", "const", "required":
			out[k] = x
		case "enum":
			out[k] = x
		case "items", "additionalProperties":
			out[k] = canon(x, defs)
		case "properties":
			props := map[string]any{}
			for name, p := range x.(map[string]any) {
				props[name] = canon(p, defs)
			}
			out[k] = props
		case "anyOf":
			var alts []any
			for _, a := range x.([]any) {
				alts = append(alts, canon(a, defs))
			}
			out[k] = alts
		}
	}
	if r, ok := out["required"].([]any); ok {
		sort.Slice(r, func(i, j int) bool { return r[i].(string) < r[j].(string) })
	}
	return out
}

// The official Python MCP client drives `osb mcp` through a whole sandbox
// life, over stdio and over streamable HTTP.
func TestMCPInteropOfficialPythonClient(t *testing.T) {
	t.Parallel()
	py := mcpPython(t)
	bin, env := startServer(t)
	check := func(transport string, steps map[string]map[string]any) {
		t.Helper()
		for _, step := range []string{"create", "run", "write", "read", "kill"} {
			if steps[step]["is_error"] != false {
				t.Errorf("%s %s failed: %v", transport, step, steps[step])
			}
		}
		run, _ := steps["run"]["structured"].(map[string]any)
		const logs = `{"stderr":[],"stdout":[{"is_error":false,"text":"from-python"},{"is_error":false,"text":"second"}]}`
		if run["exit_code"] != float64(4) || logsOf(run) != logs || steps["run"]["sdk_text"] != "from-python\nsecond" {
			t.Errorf("%s command_run: exit %v, logs %s, read by the SDK as %q; want exit 4, logs %s", transport,
				run["exit_code"], logsOf(run), steps["run"]["sdk_text"], logs)
		}
		read, _ := steps["read"]["structured"].(map[string]any)
		if read["content"] != "written by python\n" {
			t.Errorf("%s file_read: %v", transport, read)
		}
		un := steps["unregistered"]
		if un["is_error"] != true || !strings.Contains(un["text"].(string), "sandbox_connect") || !strings.Contains(un["text"].(string), "exit code 2") {
			t.Errorf("%s unregistered sandbox: %v", transport, un)
		}
	}
	var steps map[string]map[string]any
	driver(t, py, env, &steps, "workflow-stdio", bin, "mcp")
	check("stdio", steps)

	const token = "python-interop-token-0123456789"
	m := launchMCPHTTP(t, bin, append(env, "OSB_MCP_TOKEN="+token))
	steps = nil
	driver(t, py, env, &steps, "workflow-http", m.url, token)
	check("http", steps)
}

// The official opensandbox-mcp, driven by the official Python client,
// works against osb server: the same sandbox life through the official
// server's own SDK.
func TestMCPInteropOfficialServerAgainstOsbServer(t *testing.T) {
	t.Parallel()
	py := mcpPython(t)
	_, env := startServer(t)
	var steps map[string]map[string]any
	driver(t, py, env, &steps, "workflow-stdio", filepath.Join(filepath.Dir(py), "opensandbox-mcp"))
	for _, step := range []string{"create", "run", "write", "read", "kill"} {
		if steps[step]["is_error"] != false {
			t.Errorf("%s failed: %v", step, steps[step])
		}
	}
	if read, _ := steps["read"]["structured"].(map[string]any); read["content"] != "written by python\n" {
		t.Errorf("file_read: %v", steps["read"])
	}
	if run, _ := steps["run"]["structured"].(map[string]any); run["exit_code"] != float64(4) {
		t.Errorf("command_run: %v", steps["run"])
	}
	// Read through the official SDK's model, the output is the lines
	// joined, as with osb mcp.
	if text := steps["run"]["sdk_text"]; text != "from-python\nsecond" {
		t.Errorf("command_run read by the SDK: %q", text)
	}
}

// normalized is a tool result with what differs from run to run made
// fixed: a set timestamp becomes 1, execution ids and times 0.
func normalized(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			switch {
			case k == "timestamp" && x.(float64) > 0:
				out[k] = 1
			case k == "execution_time_in_millis":
				out[k] = 0
			case k == "id":
				out[k] = x != nil
			default:
				out[k] = normalized(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalized(x)
		}
		return out
	}
	return v
}

// osb mcp and the official opensandbox-mcp, each driven by the official
// Python client against the same osb server, return the same command_run
// results: a message per line, empty lines as the official server sends
// them, the same exit codes, errors and completions; and the client's
// check of each result against the tool's output schema passes.
func TestMCPInteropSameResultsAsOfficialServer(t *testing.T) {
	t.Parallel()
	py := mcpPython(t)
	bin, env := startServer(t)
	var ours, official struct {
		Runs []map[string]any `json:"runs"`
	}
	driver(t, py, env, &ours, "compare", bin, "mcp")
	driver(t, py, env, &official, "compare", filepath.Join(filepath.Dir(py), "opensandbox-mcp"))
	if len(ours.Runs) != len(official.Runs) || len(ours.Runs) == 0 {
		t.Fatalf("%d runs, the official server %d", len(ours.Runs), len(official.Runs))
	}
	for i := range official.Runs {
		if e := ours.Runs[i]["client_error"]; e != nil {
			t.Errorf("run %d: the official client refused the result: %v", i, e)
		}
		got, want := mustJSON(normalized(ours.Runs[i]["structured"])), mustJSON(normalized(official.Runs[i]["structured"]))
		if got != want {
			t.Errorf("run %d differs\nosb mcp:  %s\nofficial: %s", i, got, want)
		}
	}
}

// What an agent meets, through the official Python client over stdio and
// over HTTP: the tools in the official order, a null argument named in
// the error, a long line with its timestamp, output cut to the default
// budget with a note saying what and how to read on, the exit code of a
// shell ended with end true, and no shell left running once osb mcp exits.
func TestMCPInteropAgent(t *testing.T) {
	t.Parallel()
	py := mcpPython(t)
	bin, env := startServer(t)

	var steps map[string]any
	driver(t, py, env, &steps, "agent-stdio", bin, "mcp", "--tools", "all")
	checkAgentSteps(t, "stdio", steps)
	checkNoShellRuns(t, bin, env, steps["sandbox_id"])

	const token = "python-agent-token-0123456789"
	m := launchMCPHTTP(t, bin, append(env, "OSB_MCP_TOKEN="+token), "--tools", "all")
	steps = nil
	driver(t, py, env, &steps, "agent-http", m.url, token)
	checkAgentSteps(t, "http", steps)
	m.cmd.Process.Signal(syscall.SIGINT)
	if err := m.cmd.Wait(); err != nil {
		t.Errorf("osb mcp --http on SIGINT: %v", err)
	}
	checkNoShellRuns(t, bin, env, steps["sandbox_id"])
}

func checkAgentSteps(t *testing.T, transport string, steps map[string]any) {
	t.Helper()
	var names []string
	for _, n := range steps["tools"].([]any) {
		names = append(names, n.(string))
	}
	official, _ := osbmcp.ToolNames()
	if len(names) < len(official) || !slices.Equal(names[:len(official)], official) {
		t.Errorf("%s: tools listed %v, want the official order %v first", transport, names, official)
	}
	step := func(name string) (map[string]any, map[string]any) {
		s, _ := steps[name].(map[string]any)
		if s["client_error"] != nil {
			t.Errorf("%s %s: the official client refused the result: %v", transport, name, s["client_error"])
		}
		out, _ := s["structured"].(map[string]any)
		return s, out
	}
	if null, _ := step("null"); null["is_error"] != true ||
		null["text"] != "argument sandbox_id is null, but it must be a string (exit code 2: usage)" {
		t.Errorf("%s null sandbox_id: %v", transport, null)
	}
	_, long := step("long_line")
	msgs, _ := long["logs"].(map[string]any)["stdout"].([]any)
	first, _ := msgs[0].(map[string]any)
	if len(msgs) != 1 || first["timestamp"].(float64) <= 0 || long["truncated"] == nil {
		t.Errorf("%s a 70000-byte line: %d messages, the first stamped %v, truncated %v", transport, len(msgs), first["timestamp"], long["truncated"])
	}
	raw, many := step("many_lines")
	tr, _ := many["truncated"].(map[string]any)
	note, _ := tr["note"].(string)
	if n := len(raw["text"].(string)); n > osbmcp.DefaultMaxOutput+2000 || tr["limit"] != float64(osbmcp.DefaultMaxOutput) ||
		!strings.Contains(note, "output budget of this server (osb mcp --max-output)") || !strings.Contains(note, "stdout: its first") ||
		!strings.Contains(note, "command_logs") {
		t.Errorf("%s 100000 lines: %d bytes of text, truncated %v", transport, n, tr)
	}
	if _, end := step("shell_end"); end["exit_code"] != float64(3) || end["running"] != false {
		t.Errorf("%s shell_exec exit 3 with end true: %v", transport, end)
	}
	if _, left := step("shell_left"); left["running"] != true {
		t.Errorf("%s shell_exec left running: %v", transport, left)
	}
}

// checkNoShellRuns fails the test if a shell session of the sandbox, or
// the sleep one was left running, still runs.
func checkNoShellRuns(t *testing.T, bin string, env []string, id any) {
	t.Helper()
	sb, _ := id.(string)
	r := osb(t, bin, env, "command", "shell", "ls", sb, "-o", "json").expect(t, 0)
	var sessions []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &sessions); err != nil {
		t.Fatalf("shell ls: %v %s", err, r.stdout)
	}
	for _, s := range sessions {
		if s["running"] != false {
			t.Errorf("a shell still runs after osb mcp exited: %v", s)
		}
	}
	if r := osb(t, bin, env, "command", "run", sb, "--", "sh", "-c", "pgrep -x sleep || echo none").expect(t, 0); r.stdout != "none\n" {
		t.Errorf("sleep still runs after osb mcp exited: %q", r.stdout)
	}
}
