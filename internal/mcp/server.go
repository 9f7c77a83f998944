package mcp

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
)

// Defaults for the content a tool call returns or accepts.
const (
	DefaultMaxOutput = 1 << 20  // text or file bytes returned by one call
	DefaultMaxUpload = 16 << 20 // decoded bytes file_upload accepts
)

// Options configures a Server.
type Options struct {
	Client *client.Client
	// Tools is what --tools selected (see SelectTools); nil: the official set.
	Tools []string
	// AllowAnySandbox lets tools act on sandboxes this server neither
	// created nor connected to: they are connected to on first use.
	AllowAnySandbox bool
	MaxOutput       int // 0: DefaultMaxOutput
	MaxUpload       int // 0: DefaultMaxUpload
	Version         string
}

// Server is the MCP server: the selected tools over one API client.
type Server struct {
	c      *client.Client
	opts   Options
	reg    *registry
	shells shells
	srv    *mcp.Server
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
	s := &Server{c: opts.Client, opts: opts, reg: newRegistry()}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "osb", Title: "OpenSandbox (osb)", Version: opts.Version},
		&mcp.ServerOptions{Instructions: instructions})
	s.srv.AddReceivingMiddleware(describeErrors)
	selected := map[string]bool{}
	for _, n := range names {
		selected[n] = true
	}
	for _, t := range catalog() {
		if selected[t.name] {
			t.add(s, t.tool())
		}
	}
	return s, nil
}

// MCP is the underlying SDK server, for transports of the caller's own.
func (s *Server) MCP() *mcp.Server { return s.srv }

// ServeIO serves one client over a pair of streams (stdio) until the client
// goes away or ctx ends.
func (s *Server) ServeIO(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return s.srv.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

// handler adapts a tool method to the SDK: arguments arrive decoded,
// validated and with their defaults; the result becomes structured content
// and its JSON text; an error becomes a tool error (see describeErrors).
func handler[In, Out any](m func(*Server, context.Context, *mcp.CallToolRequest, In) (Out, error)) func(*Server, *mcp.Tool) {
	return func(s *Server, t *mcp.Tool) {
		t.OutputSchema = outputSchema[Out]()
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
