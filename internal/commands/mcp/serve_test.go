package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
)

// Typed at a terminal, `osb mcp` says what it is for, on stderr; stdout
// stays the protocol's. It ends when its input does.
func TestServeAtATerminal(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	ios, _, stdout, stderr := iostreams.Test()
	ios.SetTTY(true, true, true)
	code := commands.Run(context.Background(), env.Factory(ios), []string{"mcp"})
	if code != 0 || stdout.String() != "" || !strings.HasPrefix(stderr.String(), "osb mcp speaks MCP on stdin and stdout") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// serveStdio runs `osb mcp ARGS...` in-process with its stdin and stdout
// on pipes, and connects the Go SDK's client to them. When the test ends
// the client closes the server's input, and osb mcp must exit 0, having
// written nothing to stderr.
func serveStdio(t *testing.T, env *cmdtest.Env, args ...string) *mcp.ClientSession {
	t.Helper()
	toServer, serverIn := io.Pipe()
	serverOut, fromServer := io.Pipe()
	ios, _, _, stderr := iostreams.Test()
	ios.In, ios.Out = toServer, fromServer
	exit := make(chan int, 1)
	go func() {
		exit <- commands.Run(context.Background(), env.Factory(ios), append([]string{"mcp"}, args...))
		fromServer.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	session, err := c.Connect(ctx, &mcp.IOTransport{Reader: serverOut, Writer: serverIn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		session.Close()
		if code := <-exit; code != 0 || stderr.Len() != 0 {
			t.Errorf("osb mcp ended with exit %d, stderr %q", code, stderr.String())
		}
	})
	return session
}

// callJSON calls a tool that must succeed and returns its structured
// content as JSON, decoded.
func callJSON(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) any {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	return decode(t, mustMarshal(t, res.StructuredContent))
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return v
}

// The tools return the views the commands print: a sandbox, an endpoint
// and a health answer read the same through sandbox_get_info and
// `osb sandbox get -o json`, and so on, keys that are unset included
// (null extensions, allocation and snapshot).
func TestToolsReturnTheCommandsViews(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	plain := env.NewSandbox()
	labelled := env.NewSandbox("--metadata", "team=mcp", "--extension", "tier=gold")
	s := serveStdio(t, env, "--allow-any-sandbox")
	for _, id := range []string{plain, labelled} {
		cases := []struct {
			tool string
			args map[string]any
			cli  []string
		}{
			{"sandbox_get_info", map[string]any{"sandbox_id": id}, []string{"sandbox", "get", id}},
			{"sandbox_get_endpoint", map[string]any{"sandbox_id": id, "port": 8000}, []string{"sandbox", "endpoint", id, "-p", "8000"}},
			{"sandbox_healthcheck", map[string]any{"sandbox_id": id}, []string{"sandbox", "health", id}},
		}
		for _, c := range cases {
			got := mustMarshal(t, callJSON(t, s, c.tool, c.args))
			want := mustMarshal(t, decode(t, env.Must(append(c.cli, "-o", "json")...)))
			if got != want {
				t.Errorf("%s:\ntool %s\ncli  %s", c.tool, got, want)
			}
		}
	}
	info := callJSON(t, s, "sandbox_get_info", map[string]any{"sandbox_id": plain}).(map[string]any)
	for _, key := range []string{"extensions", "allocation", "snapshot_id"} {
		if v, ok := info[key]; !ok || v != nil {
			t.Errorf("sandbox_get_info %s: %v (present %v), want null", key, v, ok)
		}
	}
	page := callJSON(t, s, "sandbox_list", map[string]any{"filter": map[string]any{"metadata": map[string]any{"team": "mcp"}}})
	items := decode(t, env.Must("sandbox", "list", "--metadata", "team=mcp", "-o", "json")).(map[string]any)["items"]
	if got, want := mustMarshal(t, page.(map[string]any)["sandbox_infos"]), mustMarshal(t, items); got != want {
		t.Errorf("sandbox_list:\ntool %s\ncli  %s", got, want)
	}
}

// `osb mcp` is a verb with one subcommand: any other word is refused
// before anything is served, with the nearest name.
func TestServeRefusesUnknownWords(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	env.Run("mcp", "instal").ExpectError(t, 2, `unknown command "instal" for "osb mcp". Did you mean "install"?`)
	env.Run("mcp", "--max-output", "0").ExpectError(t, 2, "--max-output and --max-upload must be positive")
	env.Run("mcp", "--tools", "nope").ExpectError(t, 2, `unknown tool "nope" in --tools`)
	env.Run("mcp", "--token-file", "/tmp/t").ExpectError(t, 2, "--token-file is for --http")
}

// Requests written all at once with the input closed after them, as
// `printf … | osb mcp` does, all get their answer before osb mcp exits;
// and the shells shell_exec started end with it, with what runs in them.
func TestServeAnswersEverythingThenEndsShells(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	id := env.NewSandbox()
	call := func(n int, tool string, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"sandbox_id":%q,%s}}}`, n, tool, id, args)
	}
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		call(2, "shell_exec", `"input":"echo up; sleep 600\n","until":"up\r\n"`),
		call(3, "command_run", `"command":"sleep 1; echo late"`),
		call(4, "sandbox_get_info", `"connect_if_missing":true`),
	}, "\n") + "\n"
	r := env.RunStdin(input, "mcp", "--tools", "all", "--allow-any-sandbox")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("osb mcp: exit %d, stderr %q", r.Code, r.Stderr)
	}
	results := map[float64]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		m, _ := decode(t, line).(map[string]any)
		res, _ := m["result"].(map[string]any)
		if sc, ok := res["structuredContent"].(map[string]any); ok && res["isError"] != true {
			results[m["id"].(float64)] = sc
		}
	}
	shell, run := results[2], results[3]
	late := `{"stderr":[],"stdout":[{"is_error":false,"text":"late","timestamp":0}]}`
	if len(results) != 3 || shell["running"] != true || logsWithoutTimes(run) != late || results[4]["id"] != id {
		t.Fatalf("answers:\n%s", r.Stdout)
	}
	sessions := decode(t, env.Must("command", "shell", "ls", id, "-o", "json")).([]any)
	for _, s := range sessions {
		if s.(map[string]any)["running"] != false {
			t.Errorf("a shell still runs after osb mcp exited: %v", s)
		}
	}
	if out := env.Must("command", "run", id, "--", "sh", "-c", "pgrep -x sleep || echo none"); out != "none\n" {
		t.Errorf("sleep still runs after osb mcp exited: %q", out)
	}
}

// logsWithoutTimes is a command_run result's logs as JSON with every
// timestamp, once checked to be set, written as 0.
func logsWithoutTimes(ex map[string]any) string {
	logs, _ := ex["logs"].(map[string]any)
	for _, stream := range logs {
		list, _ := stream.([]any)
		for _, m := range list {
			m := m.(map[string]any)
			if ts, _ := m["timestamp"].(float64); ts <= 0 {
				return fmt.Sprintf("a message without timestamp: %v", m)
			}
			m["timestamp"] = 0
		}
	}
	b, _ := json.Marshal(logs)
	return string(b)
}
