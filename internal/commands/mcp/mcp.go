// Package mcp implements `osb mcp`: the OpenSandbox tools served to coding
// agents over the Model Context Protocol, and `osb mcp install`, which
// points an agent at them.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/build"
	"github.com/osb-dev/osb/internal/cmdutil"
	osbmcp "github.com/osb-dev/osb/internal/mcp"
	"github.com/osb-dev/osb/internal/ops"
)

type serveOptions struct {
	cmdutil.Base
	HTTP            string
	TokenFile       string
	Tools           []string
	AllowAnySandbox bool
	MaxOutput       int
	MaxUpload       int
}

// NewCmdMCP returns `osb mcp` and its subcommands.
func NewCmdMCP(f *cmdutil.Factory) *cobra.Command {
	opts := &serveOptions{}
	official, extras := osbmcp.ToolNames()
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[serveOptions]{
		Name:  "mcp",
		Short: "Serve OpenSandbox tools to coding agents over MCP (stdio or HTTP).",
		Long: "Serve the OpenSandbox tools of the official MCP server (opensandbox-mcp) to a coding\n" +
			"agent over the Model Context Protocol: on stdin and stdout by default, or over\n" +
			"streamable HTTP at http://ADDR/mcp with --http. Tool names, arguments and results\n" +
			"are the official server's, so an agent set up for it works unchanged. The server\n" +
			"connects to OpenSandbox with the same flags, OPEN_SANDBOX_* variables and config\n" +
			"file as every osb command.\n\n" +
			"Tools that act inside a sandbox accept only sandboxes that sandbox_create or\n" +
			"sandbox_connect registered in this process (or that the call asks to connect to\n" +
			"with connect_if_missing); --allow-any-sandbox lifts that for trusted setups.\n\n" +
			"Over HTTP every request must carry 'Authorization: Bearer TOKEN'. The token comes\n" +
			"from --token-file, else $" + osbmcp.TokenEnv + ", else the file " + osbmcp.TokenFile + " beside the\n" +
			"config file, made (mode 0600) on first use. It is never the OpenSandbox API key.\n\n" +
			wrap("Official tools: "+strings.Join(official, ", ")+".") +
			wrap("Extra tools, served only when --tools names them: "+strings.Join(extras, ", ")+".") +
			"A failed tool call says why and carries the exit code osb would end with\n" +
			"(osb help exit-codes). A call returns at most --max-output bytes of output or file\n" +
			"content, counted as the JSON text the agent reads (32 KiB by default, sized for an\n" +
			"agent's context window); what is cut is said in the result, with how to read on.\n\n" +
			"When stdin ends, the server answers every request it has read before it exits;\n" +
			"every shell that shell_exec started ends with it.",
		Example: "  osb mcp\n" +
			"  osb mcp --tools default,command_logs,file_upload,file_download\n" +
			"  osb mcp --http 127.0.0.1:8765\n" +
			"  osb mcp install --target claude --scope project",
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.HTTP, "http", "", "Serve streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio.")
			fs.StringVar(&opts.TokenFile, "token-file", "", "File holding the HTTP bearer token (mode 0600).")
			fs.StringSliceVar(&opts.Tools, "tools", nil, "Comma-separated `LIST` of tools to serve: names, default, all, -NAME to leave one out (default: the official set).")
			fs.Complete("tools", append(slices.Concat(official, extras), "default", "all")...)
			fs.BoolVar(&opts.AllowAnySandbox, "allow-any-sandbox", false, "Let tools act on any sandbox, connecting to it on first use.")
			fs.IntVar(&opts.MaxOutput, "max-output", osbmcp.DefaultMaxOutput, "Most bytes of output or file content one tool call returns, as JSON text.")
			fs.IntVar(&opts.MaxUpload, "max-upload", osbmcp.DefaultMaxUpload, "Most bytes file_upload accepts.")
		},
		Run:         runServe,
		Subcommands: []*cobra.Command{newCmdInstall(f, nil)},
	})
}

func runServe(ctx context.Context, opts *serveOptions) error {
	if opts.MaxOutput <= 0 || opts.MaxUpload <= 0 {
		return ops.UsageErrorf("--max-output and --max-upload must be positive")
	}
	tools, err := osbmcp.SelectTools(opts.Tools)
	if err != nil {
		return err
	}
	if opts.TokenFile != "" && opts.HTTP == "" {
		return ops.UsageErrorf("--token-file is for --http")
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	srv, err := osbmcp.New(osbmcp.Options{Client: c, Tools: tools, AllowAnySandbox: opts.AllowAnySandbox,
		MaxOutput: opts.MaxOutput, MaxUpload: opts.MaxUpload, Version: build.Version})
	if err != nil {
		return err
	}
	defer srv.Close()
	if opts.HTTP != "" {
		return serveHTTP(ctx, opts, srv)
	}
	ios := opts.IOStreams
	if ios.IsStdinTTY() {
		fmt.Fprintln(ios.ErrOut, "osb mcp speaks MCP on stdin and stdout: start it from an MCP client "+
			"(osb mcp install sets one up). Ctrl-C stops it.")
	}
	err = srv.ServeIO(ctx, io.NopCloser(ios.In), nopWriteCloser{ios.Out})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil // the client went away, or Ctrl-C
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func serveHTTP(ctx context.Context, opts *serveOptions, srv *osbmcp.Server) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	token, from, err := osbmcp.TokenSource{
		File:   opts.TokenFile,
		Env:    opts.Getenv(osbmcp.TokenEnv),
		Stored: filepath.Join(filepath.Dir(opts.ConfigPath()), osbmcp.TokenFile),
		APIKey: cfg.APIKey,
	}.Resolve()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.HTTP)
	if err != nil {
		return ops.UsageErrorf("cannot listen on %s: %v", opts.HTTP, err)
	}
	stderr := opts.IOStreams.ErrOut
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() {
		fmt.Fprintf(stderr, "Warning: %s is reachable from other machines, over plain HTTP.\n", addr)
	}
	fmt.Fprintf(stderr, "MCP token: read from %s (send it as Authorization: Bearer TOKEN)\n", from)
	fmt.Fprintf(stderr, "osb mcp listening on http://%s%s\n", addr, osbmcp.HTTPPath)
	return srv.ServeHTTP(ctx, ln, token)
}

// wrap breaks text into lines of at most 80 columns, each ended by a newline.
func wrap(text string) string {
	var b, line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(w) > 80 {
			b.WriteString(line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	return b.String() + line.String() + "\n"
}
