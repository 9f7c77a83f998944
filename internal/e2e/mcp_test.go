package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient connects the Go SDK's client to an MCP server over t.
func mcpClient(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting to osb mcp: %v", err)
	}
	return s
}

// callTool calls a tool that must succeed and returns its structured content.
func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	json.Unmarshal(b, &out)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %v", name, args, out)
	}
	return out
}

// workflow is create → command_run → file_write → file_read → kill through
// the tools, checked against the server.
func workflow(t *testing.T, s *mcp.ClientSession, bin string, env []string) {
	t.Helper()
	id := callTool(t, s, "sandbox_create", map[string]any{"image": "python:3.11"})["sandbox_id"].(string)
	ex := callTool(t, s, "command_run", map[string]any{"sandbox_id": id, "command": "echo hello from mcp; echo; echo bye; exit 7"})
	const want = `{"stderr":[],"stdout":[{"is_error":false,"text":"hello from mcp"},{"is_error":false,"text":"\n"},{"is_error":false,"text":"bye"}]}`
	if got := logsOf(ex); ex["exit_code"] != float64(7) || got != want {
		t.Errorf("command_run: exit %v, logs %s; want exit 7, logs %s", ex["exit_code"], got, want)
	}
	callTool(t, s, "file_write", map[string]any{"sandbox_id": id, "path": "/workspace/m.txt", "content": "über\n"})
	if got := callTool(t, s, "file_read", map[string]any{"sandbox_id": id, "path": "/workspace/m.txt"}); got["content"] != "über\n" {
		t.Errorf("file_read: %v", got)
	}
	// The CLI sees the same file.
	if r := osb(t, bin, env, "file", "cat", id, "/workspace/m.txt", "-o", "raw").expect(t, 0); r.stdout != "über\n" {
		t.Errorf("osb file cat: %q", r.stdout)
	}
	callTool(t, s, "sandbox_kill", map[string]any{"sandbox_id": id})
	osb(t, bin, env, "sandbox", "get", id, "-o", "json").expect(t, 4)
}

// logsOf is the logs of a command_run result as JSON, each message's
// timestamp left out once checked to be set.
func logsOf(ex map[string]any) string {
	logs, _ := ex["logs"].(map[string]any)
	for _, stream := range logs {
		msgs, _ := stream.([]any)
		for _, m := range msgs {
			m := m.(map[string]any)
			if ts, _ := m["timestamp"].(float64); ts <= 0 {
				return "no timestamp in " + mustJSON(logs)
			}
			delete(m, "timestamp")
		}
	}
	return mustJSON(logs)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The Go SDK's client drives `osb mcp` over a real stdio subprocess.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env := startServer(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	s := mcpClient(t, &mcp.CommandTransport{Command: cmd})
	workflow(t, s, bin, env)
	if err := s.Close(); err != nil {
		t.Errorf("closing the session: %v", err)
	}
	// Closing stdin ends the server, cleanly and quietly.
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() || stderr.String() != "" {
		t.Errorf("osb mcp ended with %v, stderr %q", cmd.ProcessState, stderr.String())
	}
}

// mcpHTTP is `osb mcp --http` running in the background.
type mcpHTTP struct {
	cmd    *exec.Cmd
	url    string
	stderr []string
}

func launchMCPHTTP(t *testing.T, bin string, env []string, args ...string) *mcpHTTP {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &mcpHTTP{cmd: cmd}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		m.stderr = append(m.stderr, sc.Text())
		if rest, ok := strings.CutPrefix(sc.Text(), "osb mcp listening on "); ok {
			m.url = rest
			go func() {
				for sc.Scan() {
				}
			}()
			return m
		}
	}
	t.Fatalf("osb mcp --http exited before listening:\n%s", strings.Join(m.stderr, "\n"))
	return nil
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// Over HTTP, a token of the server's own is required on every request; a
// generated one is kept in a 0600 file beside the config.
func TestMCPHTTP(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env := startServer(t)
	home := strings.TrimPrefix(env[0], "HOME=")
	m := launchMCPHTTP(t, bin, env)
	tokenFile := filepath.Join(home, ".opensandbox", "mcp-token")
	if !slices.Contains(m.stderr, "MCP token: read from "+tokenFile+" (send it as Authorization: Bearer TOKEN)") {
		t.Errorf("start-up lines %q", m.stderr)
	}
	info, err := os.Stat(tokenFile)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", info, err)
	}
	raw, _ := os.ReadFile(tokenFile)
	token := strings.TrimSpace(string(raw))
	if strings.Contains(strings.Join(m.stderr, "\n"), token) {
		t.Errorf("the token was printed")
	}

	for _, auth := range []string{"", "Bearer e2e-key", "Bearer " + token[1:]} {
		req, _ := http.NewRequest(http.MethodPost, m.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: HTTP %d, want 401", auth, resp.StatusCode)
		}
	}

	s := mcpClient(t, &mcp.StreamableClientTransport{Endpoint: m.url, HTTPClient: &http.Client{Transport: bearer(token)}})
	workflow(t, s, bin, env)
	s.Close()
	m.cmd.Process.Signal(syscall.SIGINT)
	if err := waitStopped(t, m.cmd); err != nil {
		t.Errorf("osb mcp --http on SIGINT: %v", err)
	}

	// A restart reuses the stored token.
	m = launchMCPHTTP(t, bin, env)
	s = mcpClient(t, &mcp.StreamableClientTransport{Endpoint: m.url, HTTPClient: &http.Client{Transport: bearer(token)}})
	callTool(t, s, "sandbox_list", map[string]any{})
	s.Close()
}

func TestMCPUsageErrors(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home := t.TempDir()
	env := clientEnv(home, "127.0.0.1:1", "e2e-key")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--tools", "nope"}, `Error: unknown tool "nope" in --tools`},
		{[]string{"mcp", "--token-file", "/x"}, "Error: --token-file is for --http"},
		{[]string{"mcp", "--max-output", "0"}, "Error: --max-output and --max-upload must be positive"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "--token-file", filepath.Join(home, "missing")}, "no such file"},
	} {
		r := osb(t, bin, env, c.args...).expect(t, 2, c.args...)
		if !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("osb %v: stderr %q, want %q", c.args, r.stderr, c.want)
		}
	}
	r := osb(t, bin, append(env, "OSB_MCP_TOKEN=e2e-key"), "mcp", "--http", "127.0.0.1:0").expect(t, 2)
	if !strings.Contains(r.stderr, "the MCP token from $OSB_MCP_TOKEN is shorter than 16 characters") {
		t.Errorf("short token: %q", r.stderr)
	}
	key := "an-api-key-long-enough-to-be-a-token"
	env = clientEnv(home, "127.0.0.1:1", key)
	r = osb(t, bin, append(env, "OSB_MCP_TOKEN="+key), "mcp", "--http", "127.0.0.1:0").expect(t, 2)
	if !strings.Contains(r.stderr, "is the OpenSandbox API key") || strings.Contains(r.stderr, key) {
		t.Errorf("the API key as token: %q", r.stderr)
	}
}

// `printf … | osb mcp`: every request written gets its answer, the slow
// ones too, before osb mcp exits at the end of its input.
func TestMCPStdioAnswersAllAtEndOfInput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env := startServer(t)
	var sb struct{ ID string }
	json.Unmarshal([]byte(osb(t, bin, env, "sandbox", "create", "-i", "python:3.11", "-o", "json").expect(t, 0).stdout), &sb)
	call := func(n int, tool, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"sandbox_id":%q%s}}}`, n, tool, sb.ID, args)
	}
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		call(2, "command_run", `,"command":"sleep 1; echo slow"`),
		call(3, "command_run", `,"command":"echo quick"`),
		call(4, "sandbox_get_info", ""),
	}
	cmd := exec.Command("sh", append([]string{"-c", `printf '%s\n' "$@" | "$0" mcp --allow-any-sandbox`, bin}, requests...)...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() != 0 {
		t.Fatalf("printf | osb mcp: %v, stderr %q", err, stderr.String())
	}
	got := map[float64]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var m struct {
			ID     float64 `json:"id"`
			Result struct {
				IsError    bool           `json:"isError"`
				Structured map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		got[m.ID] = "answered"
		if m.Result.Structured != nil && !m.Result.IsError {
			got[m.ID] = logsOf(m.Result.Structured)
		}
	}
	quiet := func(text string) string {
		return `{"stderr":[],"stdout":[{"is_error":false,"text":"` + text + `"}]}`
	}
	if len(got) != 4 || got[2] != quiet("slow") || got[3] != quiet("quick") || got[1] != "answered" {
		t.Errorf("answers %v\n%s", got, stdout.String())
	}
}
