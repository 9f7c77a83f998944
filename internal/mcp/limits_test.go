package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	osbmcp "github.com/osb-dev/osb/internal/mcp"
)

// jsonLen is how many bytes s takes in the result's JSON text, quotes left out.
func jsonLen(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b) - 2
}

// The output budget counts the result's JSON text: command_run keeps the
// newest messages that fit and says what it left out of which stream and
// how to read it all; file_read keeps the start and names the range that
// reads on.
func TestOutputLimit(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{MaxOutput: 2000})
	id := h.create(nil)
	ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "seq 1 1000"})
	logs := ex["logs"].(map[string]any)
	out, errs := logs["stdout"].([]any), logs["stderr"].([]any)
	// The messages kept fit in the budget as JSON; one more line would not have.
	size := jsonLen(t, out)
	one := jsonLen(t, []any{out[0]}) + 1
	if size > 2000 || size+one <= 2000 || len(errs) != 0 {
		t.Fatalf("kept %d stdout and %d stderr messages, %d bytes as JSON; budget 2000", len(out), len(errs), size)
	}
	var want []string
	for i := 1000 - len(out) + 1; i <= 1000; i++ {
		want = append(want, strconv.Itoa(i))
	}
	if stdout(ex) != msgs(want...) || stderr(ex) != msgs() || ex["exit_code"] != float64(0) {
		t.Errorf("capped command_run: stdout %s, stderr %s, exit %v", stdout(ex), stderr(ex), ex["exit_code"])
	}
	dropped := 1000 - len(out)
	omitted := len(strings.Join(strings.Fields(numbers(dropped)), ""))
	tr, _ := ex["truncated"].(map[string]any)
	note, _ := tr["note"].(string)
	for _, part := range []string{"the 2000-byte output budget of this server (osb mcp --max-output)",
		fmt.Sprintf("stdout: its first %d lines, %d bytes", dropped, omitted), "file_read", "range_header"} {
		if !strings.Contains(note, part) {
			t.Errorf("the note %q does not say %q", note, part)
		}
	}
	if tr["omitted_bytes"] != float64(omitted) || tr["limit"] != float64(2000) || strings.Contains(note, "stderr") {
		t.Errorf("truncated: %v", tr)
	}

	// One line longer than the budget: its end is kept.
	ex = h.ok("command_run", map[string]any{"sandbox_id": id, "command": "printf '%05000d' 7"})
	out = ex["logs"].(map[string]any)["stdout"].([]any)
	text, _ := out[0].(map[string]any)["text"].(string)
	tr = ex["truncated"].(map[string]any)
	if len(out) != 1 || !strings.HasSuffix(text, "07") || strings.Trim(text, "0") != "7" || jsonLen(t, out) > 2000 ||
		tr["omitted_bytes"] != float64(5000-len(text)) || !strings.Contains(tr["note"].(string), "stdout: the start of its first line") {
		t.Errorf("a line over the budget: %d bytes kept, truncated %v", len(text), tr)
	}

	h.ok("file_write", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt", "content": numbers(1000)})
	rd := h.ok("file_read", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt"})
	content := rd["content"].(string)
	all := numbers(1000)
	if !strings.HasPrefix(all, content) || jsonLen(t, content) > 2000 || jsonLen(t, all[:len(content)+1]) <= 2000 {
		t.Fatalf("capped file_read: %d bytes, %d as JSON", len(content), jsonLen(t, content))
	}
	next := fmt.Sprintf("bytes=%d-", len(content))
	tr = rd["truncated"].(map[string]any)
	if !strings.Contains(tr["note"].(string), `range_header "`+next+`"`) || tr["omitted_bytes"] != float64(len(all)-len(content)) || tr["limit"] != float64(2000) {
		t.Fatalf("capped file_read: truncated %v", tr)
	}
	more := h.ok("file_read", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt", "range_header": next})
	if got := more["content"].(string); !strings.HasPrefix(all[len(content):], got) || got == "" {
		t.Errorf("reading on: %v", more)
	}
	// A short file is not marked.
	if rd := h.ok("file_read", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt", "range_header": "bytes=0-9"}); rd["truncated"] != nil || rd["content"] != "1\n2\n3\n4\n5\n" {
		t.Errorf("short read: %v", rd)
	}
}

// The default budget keeps a result well within what an agent takes in
// one tool result (Claude Code: 25,000 tokens, and 50,000 characters
// before it sets the result aside in a file).
func TestDefaultOutputBudget(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	id := h.create(nil)
	res := h.call("command_run", map[string]any{"sandbox_id": id, "command": "seq 1 100000; head -c 200000 /dev/zero | tr '\\0' x"})
	if res.IsError {
		t.Fatal(text(res))
	}
	ex := structured(t, res)
	tr, _ := ex["truncated"].(map[string]any)
	if n := len(text(res)); n > osbmcp.DefaultMaxOutput+2000 || n < osbmcp.DefaultMaxOutput || tr["limit"] != float64(osbmcp.DefaultMaxOutput) {
		t.Errorf("the result's text is %d bytes, want about %d; truncated %v", n, osbmcp.DefaultMaxOutput, tr)
	}
	if osbmcp.DefaultMaxOutput+2000 > 50000 {
		t.Errorf("the default budget %d is over 50,000 characters", osbmcp.DefaultMaxOutput)
	}
}

// A client that sends a progress token hears the command's output while it runs.
func TestCommandProgress(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	id := h.create(nil)
	res := h.callParams(&mcp.CallToolParams{Name: "command_run", Meta: mcp.Meta{"progressToken": "run-1"},
		Arguments: map[string]any{"sandbox_id": id, "command": "echo starting; sleep 1; echo done"}})
	if res.IsError {
		t.Fatal(text(res))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var msgs []string
	last := 0.0
	for _, p := range h.progress {
		if p.ProgressToken != "run-1" || p.Progress <= last {
			t.Errorf("progress %+v after %v", p, last)
		}
		last = p.Progress
		msgs = append(msgs, p.Message)
	}
	if len(msgs) == 0 || msgs[0] != "starting" {
		t.Errorf("progress messages %q, want the first to be the first output line", msgs)
	}
	// No token, no notifications. (One of the first call's may still be on
	// its way: the client handles notifications apart from results.)
	h.mu.Unlock()
	h.ok("command_run", map[string]any{"sandbox_id": id, "command": "echo quiet"})
	h.mu.Lock()
	for _, p := range h.progress {
		if p.ProgressToken != "run-1" || p.Message == "quiet" {
			t.Errorf("a notification for a call without a progress token: %+v", *p)
		}
	}
}

// numbers is what seq 1 n prints.
func numbers(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// A call the client cancels stops the remote command too.
func TestCancelStopsCommand(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	id := h.create(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: "command_run", Meta: mcp.Meta{"progressToken": "c"},
			Arguments: map[string]any{"sandbox_id": id, "command": "echo $$ > /tmp/pid; echo started; sleep 300"}})
		done <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for !h.sawProgress("started") {
		if time.Now().After(deadline) {
			t.Fatal("the command never reported its start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call succeeded")
	}
	pid := strings.TrimSpace(h.ok("file_read", map[string]any{"sandbox_id": id, "path": "/tmp/pid"})["content"].(string))
	for {
		ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "kill -0 " + pid})
		if ex["exit_code"] != float64(0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %s still runs after the call was cancelled", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
