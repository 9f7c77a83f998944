// Package agent is the part of osb server that runs inside an isolated
// sandbox: the execd API, served on a unix socket the server passes down,
// for processes and files as the sandbox sees them. The server starts its
// own binary again for it (see package sandbox); this package's init
// function takes over when sandbox.AgentEnv is set, so any binary that
// links it (through package server) can be the agent.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/osb-dev/osb/internal/server/execd"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// The agent's inherited descriptors.
const (
	fdListener = 3
	fdReady    = 4
)

func init() {
	raw, ok := os.LookupEnv(sandbox.AgentEnv)
	if !ok {
		return
	}
	os.Unsetenv(sandbox.AgentEnv)
	gen := os.Getenv(sandbox.AgentGenEnv)
	os.Unsetenv(sandbox.AgentGenEnv)
	sandbox.CloseOnExecExcept(fdListener, fdReady)
	if err := run(raw, gen); err != nil {
		fmt.Fprintln(os.Stderr, "osb sandbox agent:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func run(raw, gen string) error {
	var cfg sandbox.AgentConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return err
	}
	sb, err := sandbox.Inside(cfg)
	if err != nil {
		return err
	}
	inherited := os.NewFile(fdListener, "listener")
	ln, err := net.FileListener(inherited)
	inherited.Close() // the listener has its own copy; commands must not inherit this one
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           withAgentID(gen, unchunkedStreams(execd.New(sb, execd.Options{}))),
		ReadHeaderTimeout: 30 * time.Second,
		ConnContext:       roomySend,
	}
	ready := os.NewFile(fdReady, "ready")
	ready.WriteString("ready\n")
	ready.Close()
	return srv.Serve(ln)
}

// withAgentID marks every answer with this agent process's id, by which
// the server tells that a sandbox's execd was restarted (execd.AgentHeader):
// its generation (sandbox.AgentGeneration), which tells the server which
// of the init's restarts now answers, then a random part.
func withAgentID(gen string, h http.Handler) http.Handler {
	b := make([]byte, 8)
	rand.Read(b)
	id := gen + "." + hex.EncodeToString(b)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(execd.AgentHeader, id)
		h.ServeHTTP(w, r)
	})
}

// sendBuffer is the socket buffer the agent writes its answers into. A
// unix socket's default (about 200 KiB) takes a command stream's writes
// of execd's writeSize in two parts, with a wait for the server between
// them.
const sendBuffer = 1 << 20

func roomySend(ctx context.Context, c net.Conn) context.Context {
	if uc, ok := c.(*net.UnixConn); ok {
		uc.SetWriteBuffer(sendBuffer)
	}
	return ctx
}

// unchunkedStreams sends event streams (a command's output, above all)
// without chunked framing, closing the connection at their end instead:
// the agent's only client is the server's proxy, which frames them again
// for its own client, and net/http writes each chunk of a chunked answer
// in two writes (its header and the first 4 KiB buffered, then the rest),
// hundreds of thousands a second for a command that prints a lot. Such a
// stream ends with execd.StreamEnd once the handler is done, so that the
// proxy tells it from one cut off by the agent's death.
func unchunkedStreams(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &streamWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.stream {
			io.WriteString(w, execd.StreamEnd)
		}
	})
}

// streamWriter is an answer that, once it turns out to be an event
// stream, is sent as it is written (Transfer-Encoding identity, which
// net/http takes to mean: no chunks, and close the connection at the end).
type streamWriter struct {
	http.ResponseWriter
	stream bool
}

func (w *streamWriter) WriteHeader(code int) {
	if w.Header().Get("Content-Type") == "text/event-stream" {
		w.Header().Set("Transfer-Encoding", "identity")
		w.Header().Set(execd.StreamEndHeader, "1")
		w.stream = true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController (flushes, full duplex) and
// WebSocket upgrades the connection's own writer.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ReadFrom keeps net/http's copy for downloads (sendfile where it can).
func (w *streamWriter) ReadFrom(r io.Reader) (int64, error) {
	return w.ResponseWriter.(io.ReaderFrom).ReadFrom(r)
}
