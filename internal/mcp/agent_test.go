package mcp_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	osbmcp "github.com/osb-dev/osb/internal/mcp"
)

// A null where an argument takes none is refused with the argument's name
// and what it takes, before any request; where null is allowed it is
// the default.
func TestNullArguments(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	id := h.create(nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"command_run", map[string]any{"sandbox_id": nil, "command": "true"}, "argument sandbox_id is null, but it must be a string"},
		{"command_run", map[string]any{"sandbox_id": id, "command": "true", "background": nil},
			"argument background is null, but it must be a boolean (leave it out for the default, false)"},
		{"file_move", map[string]any{"sandbox_id": id, "entries": []any{map[string]any{"source": "/a", "destination": "/b"}, map[string]any{"source": nil, "destination": "/c"}}},
			"argument entries[1].source is null, but it must be a string"},
		{"sandbox_create", map[string]any{"image": "python:3.11", "env": map[string]any{"A": nil}}, "argument env.A is null, but it must be a string"},
	} {
		res := h.call(c.tool, c.args)
		if !res.IsError || text(res) != c.want+" (exit code 2: usage)" {
			t.Errorf("%s %v: %s", c.tool, c.args, text(res))
		}
		expectFailure(t, structured(t, res), 2, "usage", c.want)
	}
	if list, err := h.api.ListSandboxes(context.Background(), client.ListSandboxesParams{}); err != nil || len(list.Items) != 1 {
		t.Errorf("a refused sandbox_create made a sandbox: %+v %v", list, err)
	}
	ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "pwd", "working_directory": nil})
	if ex["exit_code"] != float64(0) {
		t.Errorf("working_directory null: %v", ex)
	}
}

// tools/list gives the official server's order, then the extras.
func TestToolsInOfficialOrder(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"all"}})
	res, err := h.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	official, extras := osbmcp.ToolNames()
	if want := slices.Concat(official, extras); !slices.Equal(names, want) {
		t.Errorf("tools/list order\n%v\nwant\n%v", names, want)
	}
}

// A line longer than the stream reader's buffer (64 KiB) keeps the
// timestamp of its event.
func TestLongLineTimestamp(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{MaxOutput: 1 << 20})
	id := h.create(nil)
	ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "head -c 100000 /dev/zero | tr '\\0' a; echo; echo short"})
	out := ex["logs"].(map[string]any)["stdout"].([]any)
	if len(out) != 2 {
		t.Fatalf("%d messages", len(out))
	}
	long := out[0].(map[string]any)
	if long["text"] != strings.Repeat("a", 100000) || long["timestamp"].(float64) <= 0 {
		t.Errorf("the long line: %d bytes, timestamp %v", len(long["text"].(string)), long["timestamp"])
	}
}

// end: true reports the exit code of the shell it ends: the one the
// shell exits with itself, even when the call returns before it has, and
// otherwise the status of the last command, as exit typed after the input
// gives.
func TestShellEndExitCode(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"default", "shell_exec"}})
	id := h.create(nil)
	for _, c := range []struct {
		input string
		code  float64
	}{{"exit 3\n", 3}, {"false\n", 1}, {"", 0}} {
		got := h.ok("shell_exec", map[string]any{"sandbox_id": id, "input": c.input, "end": true, "idle_ms": 1})
		if got["running"] != false || got["exit_code"] != c.code {
			t.Errorf("input %q, end true: %v, want exit_code %v", c.input, got, c.code)
		}
	}
}

// Close ends every shell shell_exec started, with what runs in it.
func TestCloseEndsShells(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"default", "shell_exec"}})
	id := h.create(nil)
	for range 2 {
		got := h.ok("shell_exec", map[string]any{"sandbox_id": id, "input": "echo up; sleep 600\n", "until": "up\r\n"})
		if got["running"] != true {
			t.Fatalf("shell_exec: %v", got)
		}
	}
	dp, err := h.api.DataPlane(context.Background(), id, client.PortExecd)
	if err != nil {
		t.Fatal(err)
	}
	running := func() int {
		sessions, err := dp.ListPTY(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range sessions {
			if s.Running {
				n++
			}
		}
		return n
	}
	if n := running(); n != 2 {
		t.Fatalf("%d shells running before Close, want 2", n)
	}
	h.server.Close()
	if n := running(); n != 0 {
		t.Errorf("%d shells still running after Close", n)
	}
	ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "pgrep -x sleep || true"})
	if stdout(ex) != msgs() {
		t.Errorf("sleep still runs after Close: %s", stdout(ex))
	}
}

// At the end of its input the server first answers every request it has
// read, however long they take.
func TestServeIODrainsAtEndOfInput(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{AllowAnySandbox: true})
	sb := createDirectly(t, h.api)
	waitRunning(t, h.api, sb.ID)
	s, err := osbmcp.New(osbmcp.Options{Client: h.api, AllowAnySandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"command_run","arguments":{"sandbox_id":%q,"command":"sleep 1; echo late"}}}`, sb.ID),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sandbox_get_info","arguments":{"sandbox_id":%q}}}`, sb.ID),
	}, "\n") + "\n"
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeIO(context.Background(), io.NopCloser(strings.NewReader(in)), w)
		w.Close()
	}()
	answers := map[float64]map[string]any{}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		if id, ok := m["id"].(float64); ok {
			answers[id] = m
		}
	}
	if err := <-done; err != nil && err != io.EOF {
		t.Errorf("ServeIO: %v", err)
	}
	run, _ := answers[2]["result"].(map[string]any)
	ex, _ := run["structuredContent"].(map[string]any)
	if len(answers) != 3 || answers[3]["result"] == nil || stdout(ex) != msgs("late") {
		t.Errorf("answers %v", answers)
	}
}

// osb's own tools take max_output per call: command_logs returns the
// start of the new output and a cursor that reads on, so that reading
// cursor by cursor gives all of it; file_download keeps what fits as
// base64 and names the range that reads on.
func TestExtrasOutputBudget(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"all"}})
	id := h.create(nil)
	bg := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "seq 1 300", "background": true})
	exec := bg["id"].(string)
	deadline := time.Now().Add(time.Minute)
	for {
		logs := h.ok("command_logs", map[string]any{"sandbox_id": id, "execution_id": exec, "max_output": 1})
		if logs["running"] == false {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background command never ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var all strings.Builder
	var cursor any
	for calls := 0; ; calls++ {
		logs := h.ok("command_logs", map[string]any{"sandbox_id": id, "execution_id": exec, "cursor": cursor, "max_output": 100})
		out := logs["output"].(string)
		all.WriteString(out)
		if jsonLen(t, out) > 100 || calls > 100 {
			t.Fatalf("call %d returned %d bytes as JSON, over max_output 100", calls, jsonLen(t, out))
		}
		tr, _ := logs["truncated"].(map[string]any)
		if tr == nil {
			break
		}
		cursor = logs["cursor"]
		note, _ := tr["note"].(string)
		if !strings.Contains(note, "the 100-byte output budget this call asked for (max_output)") ||
			!strings.Contains(note, fmt.Sprintf("read on with cursor %q", cursor)) || tr["limit"] != float64(100) {
			t.Fatalf("truncated: %v", tr)
		}
	}
	if all.String() != numbers(300) {
		t.Errorf("read cursor by cursor: %q", all.String())
	}

	h.ok("file_write", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt", "content": numbers(300)})
	down := h.ok("file_download", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt", "max_output": 100})
	got, _ := base64.StdEncoding.DecodeString(down["content_base64"].(string))
	tr, _ := down["truncated"].(map[string]any)
	if string(got) != numbers(300)[:75] || len(down["content_base64"].(string)) != 100 || tr == nil ||
		!strings.Contains(tr["note"].(string), `range_header "bytes=75-"`) {
		t.Errorf("file_download with max_output 100: %q, %v", got, tr)
	}
	expectFailure(t, h.fails("command_logs", map[string]any{"sandbox_id": id, "execution_id": exec, "max_output": 0}), 2, "usage", "max_output must be between 1 and")
}

// shell_exec keeps the newest output that fits the budget as JSON text
// (the terminal's \r\n takes four bytes there).
func TestShellOutputBudget(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"default", "shell_exec"}, MaxOutput: 500})
	id := h.create(nil)
	got := h.ok("shell_exec", map[string]any{"sandbox_id": id, "input": "seq 1 300; echo end-$((1+1))\n", "until": "end-2\r\n"})
	out := got["output"].(string)
	tr, _ := got["truncated"].(map[string]any)
	if jsonLen(t, out) > 500 || !strings.Contains(out, "300\r\nend-2\r\n") || tr == nil || tr["limit"] != float64(500) {
		t.Errorf("output of %d bytes (%d as JSON), truncated %v", len(out), jsonLen(t, out), tr)
	}
}
