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
	"testing"
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
		const logs = `{"stderr":[],"stdout":[{"is_error":false,"text":"from-python\nsecond"}]}`
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
	// The official server keeps a message per line where osb mcp joins
	// them; read through the SDK both are the same text.
	if text := steps["run"]["sdk_text"]; text != "from-python\nsecond" {
		t.Errorf("command_run read by the SDK: %q", text)
	}
}
