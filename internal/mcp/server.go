package mcp

import (
	"context"
	"io"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
)

// DefaultMaxUpload is how many decoded bytes file_upload accepts
// (DefaultMaxOutput, in limit.go, is the budget of what calls return).
const DefaultMaxUpload = 16 << 20

// Options configures a Server.
type Options struct {
	Client *client.Client
	// Tools is what --tools selected (see SelectTools); nil: the official set.
	Tools []string
	// AllowAnySandbox lets tools act on sandboxes this server neither
	// created nor connected to: they are connected to on first use.
	AllowAnySandbox bool
	MaxOutput       int // output budget of a call, in bytes of JSON text; 0: DefaultMaxOutput
	MaxUpload       int // 0: DefaultMaxUpload
	Version         string
}

// Server is the MCP server: the selected tools over one API client.
type Server struct {
	c     *client.Client
	opts  Options
	srv   *mcp.Server
	tools []string // served, in catalogue order

	// registered holds the ids of the sandboxes this server process created
	// or connected to. Tools that reach into a sandbox act only on these, so
	// an agent cannot wander into sandboxes it was never given. It lives as
	// long as the process, shared by every client session, and is never
	// persisted.
	registered sync.Map // sandbox id: true
	shells     sync.Map // session id: the *shell shell_exec started
}

const instructions = "Tools to create and use isolated OpenSandbox sandboxes. Keep the sandbox_id that " +
	"sandbox_create or sandbox_connect returns: the other tools act only on sandboxes registered that way. " +
	"Run programs with command_run, move text in and out with file_write and file_read (use range_header " +
	"for large files), expose a port with sandbox_get_endpoint, and call sandbox_kill when done. A failed " +
	"call says why and carries osb's exit code (2 bad argument, 3 auth, 4 not found, 5 timeout, 6 unreachable)."

// New builds a server; it sends no request.
func New(opts Options) (*Server, error) {
	names, err := SelectTools(opts.Tools)
	if err != nil {
		return nil, err
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.MaxUpload <= 0 {
		opts.MaxUpload = DefaultMaxUpload
	}
	s := &Server{c: opts.Client, opts: opts, tools: names}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "osb", Title: "OpenSandbox (osb)", Version: opts.Version},
		&mcp.ServerOptions{Instructions: instructions})
	inputs := map[string]*jsonschema.Schema{}
	for _, t := range catalog() {
		if slices.Contains(names, t.name) {
			tool := t.tool()
			t.add(s, tool)
			inputs[t.name] = tool.InputSchema.(*jsonschema.Schema)
		}
	}
	s.srv.AddReceivingMiddleware(describeErrors, listInCatalogueOrder, refuseNulls(inputs))
	return s, nil
}

// MCP is the underlying SDK server, for transports of the caller's own.
func (s *Server) MCP() *mcp.Server { return s.srv }

// serves reports whether the tool is served.
func (s *Server) serves(name string) bool { return slices.Contains(s.tools, name) }

// ServeIO serves one client over a pair of streams (stdio) until the
// client goes away or ctx ends. At the end of the input it first answers
// every request already read, so `printf … | osb mcp` gets every answer.
func (s *Server) ServeIO(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return s.srv.Run(ctx, &drainingTransport{inner: &mcp.IOTransport{Reader: in, Writer: out}})
}

// Close ends every shell that shell_exec started: they are this process's
// and must not outlive it. Tool calls still running may fail afterwards.
func (s *Server) Close() error {
	s.endShells()
	return nil
}

// listInCatalogueOrder lists the tools in the official server's order (the
// SDK sorts them by name): agents and prompts see them as they would there.
func listInCatalogueOrder(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
			rank := map[string]int{}
			for i, t := range catalog() {
				rank[t.name] = i
			}
			slices.SortStableFunc(list.Tools, func(a, b *mcp.Tool) int { return rank[a.Name] - rank[b.Name] })
		}
		return res, err
	}
}

// handler adapts a tool method to the SDK: arguments arrive decoded,
// validated and with their defaults; the result becomes structured content
// and its JSON text; an error becomes a tool error (see describeErrors).
func handler[In, Out any](m func(*Server, context.Context, *mcp.CallToolRequest, In) (Out, error)) func(*Server, *mcp.Tool) {
	return func(s *Server, t *mcp.Tool) {
		t.InputSchema, t.OutputSchema = inputSchema[In](), outputSchema[Out]()
		mcp.AddTool(s.srv, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			out, err := m(s, ctx, req, in)
			if err != nil {
				var zero Out
				return nil, zero, &handlerError{err}
			}
			return nil, out, nil
		})
	}
}
