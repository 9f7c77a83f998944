package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
	osbmcp "github.com/osb-dev/osb/internal/mcp"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// harness is osb's MCP server over a local osb server, with the Go SDK's
// client connected to it in memory.
type harness struct {
	t        *testing.T
	srv      *server.Server
	api      *client.Client
	server   *osbmcp.Server
	session  *mcp.ClientSession
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

func newAPIClient(t *testing.T, srv *server.Server) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{Domain: srv.Addr(), APIKey: servertest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// start serves opts (its Client filled in) to an in-memory client.
func start(t *testing.T, opts osbmcp.Options) *harness {
	t.Helper()
	h := &harness{t: t, srv: servertest.Start(t)}
	h.api = newAPIClient(t, h.srv)
	opts.Client = h.api
	s, err := osbmcp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.server = s
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	go s.MCP().Run(ctx, st)
	h.session = h.connect(ctx, ct)
	return h
}

func (h *harness) connect(ctx context.Context, t mcp.Transport) *mcp.ClientSession {
	h.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.progress = append(h.progress, req.Params)
		},
	})
	session, err := c.Connect(ctx, t, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { session.Close() })
	return session
}

func (h *harness) call(name string, args map[string]any) *mcp.CallToolResult {
	h.t.Helper()
	return h.callParams(&mcp.CallToolParams{Name: name, Arguments: args})
}

func (h *harness) callParams(p *mcp.CallToolParams) *mcp.CallToolResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.session.CallTool(ctx, p)
	if err != nil {
		h.t.Fatalf("%s: %v", p.Name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its structured content.
func (h *harness) ok(name string, args map[string]any) map[string]any {
	h.t.Helper()
	res := h.call(name, args)
	if res.IsError {
		h.t.Fatalf("%s(%v) failed: %s", name, args, text(res))
	}
	out := structured(h.t, res)
	// The text content carries the same JSON, for clients that read only text.
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil {
		h.t.Fatalf("%s: the text content is not the JSON result: %v\n%s", name, err, text(res))
	}
	return out
}

// fails calls a tool that must fail and returns its failure object.
func (h *harness) fails(name string, args map[string]any) map[string]any {
	h.t.Helper()
	res := h.call(name, args)
	if !res.IsError {
		h.t.Fatalf("%s(%v) succeeded: %s", name, args, text(res))
	}
	return structured(h.t, res)
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// create makes a sandbox through the tools and returns its id.
func (h *harness) create(extra map[string]any) string {
	h.t.Helper()
	args := map[string]any{"image": "python:3.11"}
	for k, v := range extra {
		args[k] = v
	}
	out := h.ok("sandbox_create", args)
	id, _ := out["sandbox_id"].(string)
	if id == "" {
		h.t.Fatalf("sandbox_create returned no sandbox_id: %v", out)
	}
	return id
}

// stdout is an execution's stdout as command_run returns it, a message per
// line, written as msgs writes its texts; each message must have is_error
// false, a timestamp and nothing else, or it is written as what is wrong.
func stdout(ex map[string]any) string { return logText(ex, "stdout", false) }

// stderr is stdout for the stderr stream (is_error true).
func stderr(ex map[string]any) string { return logText(ex, "stderr", true) }

// msgs writes the texts of a stream's messages as stdout and stderr do:
// msgs() is a stream that printed nothing.
func msgs(texts ...string) string { return fmt.Sprintf("%q", texts) }

func logText(ex map[string]any, stream string, isError bool) string {
	logs, _ := ex["logs"].(map[string]any)
	list, ok := logs[stream].([]any)
	if !ok {
		return fmt.Sprintf("<logs.%s is %v>", stream, logs[stream])
	}
	texts := []string{}
	for _, m := range list {
		m, _ := m.(map[string]any)
		text, _ := m["text"].(string)
		if ts, _ := m["timestamp"].(float64); m["is_error"] != isError || ts <= 0 || len(m) != 3 {
			text = fmt.Sprintf("<message %v>", m)
		}
		texts = append(texts, text)
	}
	return msgs(texts...)
}

// expectFailure checks a failure's exit code and kind and that its
// message contains want.
func expectFailure(t *testing.T, f map[string]any, code int, kind, want string) {
	t.Helper()
	if f["exit_code"] != float64(code) || f["kind"] != kind || !strings.Contains(f["error"].(string), want) {
		t.Errorf("failure %v, want exit_code %d, kind %s, error containing %q", f, code, kind, want)
	}
}

// sawProgress reports whether a progress notification said msg.
func (h *harness) sawProgress(msg string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.progress {
		if p.Message == msg {
			return true
		}
	}
	return false
}
