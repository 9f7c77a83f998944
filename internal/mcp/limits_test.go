package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	osbmcp "github.com/osb-dev/osb/internal/mcp"
)

func TestOutputLimit(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{MaxOutput: 100})
	id := h.create(nil)
	ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "seq 1 1000"})
	out := stdout(ex)
	tr, _ := ex["truncated"].(map[string]any)
	// Each line counts with its newline: the kept lines and the newlines
	// between them fit in the 100 bytes, and the rest is counted as omitted.
	all := strings.TrimSuffix(numbers(1000), "\n")
	if len(out) < 98 || len(out) > 99 || !strings.HasSuffix(all, out) ||
		tr == nil || tr["omitted_bytes"] != float64(len(all)-len(out)) {
		t.Errorf("capped command_run: stdout %q, truncated %v", out, tr)
	}
	if ex["exit_code"] != float64(0) {
		t.Errorf("exit code %v", ex["exit_code"])
	}
	h.ok("file_write", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt", "content": numbers(1000)})
	rd := h.ok("file_read", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt"})
	content := rd["content"].(string)
	note, _ := rd["truncated"].(map[string]any)
	if len(content) != 100 || !strings.HasPrefix(content, "1\n2\n3\n") || note == nil || !strings.Contains(note["note"].(string), `"bytes=100-"`) || note["omitted_bytes"] != float64(3893-100) {
		t.Fatalf("capped file_read: %q %v", content, note)
	}
	next := h.ok("file_read", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt", "range_header": "bytes=100-"})
	if got := next["content"].(string); got != numbers(1000)[100:200] || !strings.Contains(next["truncated"].(map[string]any)["note"].(string), `"bytes=200-"`) {
		t.Errorf("reading on: %v", next)
	}
	// A short file is not marked.
	if rd := h.ok("file_read", map[string]any{"sandbox_id": id, "path": "/workspace/n.txt", "range_header": "bytes=0-9"}); rd["truncated"] != nil || rd["content"] != "1\n2\n3\n4\n5\n" {
		t.Errorf("short read: %v", rd)
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
