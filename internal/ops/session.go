// Package ops holds what the command line and the MCP server both do with
// a sandbox, written once, over the wire client: no cobra, no printing of
// its own; what it has to say goes through a small interface its caller
// implements.
package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/osb-dev/osb/internal/client"
)

// Timings of a session's client; variables so that tests can shorten them.
var (
	KeepAlive    = 20 * time.Second // a WebSocket ping this often; no answer within as long, and no frame either, means the connection is lost
	ReconnectFor = 2 * time.Minute  // how long a terminal session tries to get a lost connection back
	RetryMax     = 5 * time.Second  // the longest wait between two tries
)

// Output receives what a session prints. Stdout takes everything a
// terminal shows, Stderr the stderr of pipe mode; an error from either ends
// the run. Note is a message for the user, on its own line. As with an
// io.Writer, p is not kept after the call: its memory takes later output.
type Output interface {
	Stdout(p []byte) error
	Stderr(p []byte) error
	Note(msg string)
}

// Session drives one of execd's PTY sessions over its WebSocket: Stdin
// goes to it, its output comes back through Out, and Run returns how it
// ended. Every quirk of execd's socket is handled here, once, for every
// front door:
//   - a real execd cannot end a command's input (stdin_eof is an osb server
//     extension that the server announces); StartCommand works around it;
//   - a real execd sends the exit frame before the last output, so a
//     command started by StartCommand there ends with markers (command.go);
//   - STDIN_WRITE_FAILED means the command stopped reading: input stops,
//     quietly, as a local pipe's writer stops;
//   - input sent and not confirmed (by a pong) when a connection breaks
//     may not have arrived: that is said, never sent twice.
type Session struct {
	DP       *client.DataPlane
	ID       string
	Terminal bool      // a pseudo-terminal; else pipe mode (stdout and stderr apart)
	Takeover bool      // the first connection evicts the session's client
	Stdin    io.Reader // streamed as it is read, then ended where the server can; nil: nothing
	Out      Output
	// Size is the local terminal's size, sent on every connection; nil: none.
	Size func() (cols, rows int, ok bool)
	// Reconnect takes a lost connection up again (for ReconnectFor),
	// replaying the output missed; else a loss ends the run.
	Reconnect bool

	first     *client.PTYConn // made by Connect
	end       *endMarkers     // the command's end comes as markers (StartCommand on a real execd)
	canEOF    bool            // the server takes stdin_eof
	resized   chan [2]int
	offset    int64         // output received, by the server's count
	stdinOff  bool          // the command stopped reading its input
	connected chan struct{} // closed by the connected frame of the current connection

	mu   sync.Mutex
	conn *client.PTYConn
	sent int64   // stdin bytes sent on this connection
	acks []int64 // sent, at each ping not answered yet
	ack  int64   // sent, as of the last pong

	// Only the writer of one connection at a time uses these: pending,
	// input read and not sent, goes on the next connection; readErr is
	// set before the input's channel is closed.
	pending []byte
	readErr error
}

// Result is how a run ended.
type Result struct {
	Exited    bool // the command ended, with ExitCode (nil: the server gave none)
	ExitCode  *int
	TakenOver bool  // another client took the session over
	Lost      error // the connection broke and was not taken up again
	// Err: the run could not go on (its context ended, the output failed,
	// the session went away); Detached then says the session may still run.
	Err      error
	Detached bool
}

// Resize sends a new terminal size (from any goroutine).
func (s *Session) Resize(cols, rows int) {
	select {
	case s.resizes() <- [2]int{cols, rows}:
	default:
	}
}

func (s *Session) resizes() chan [2]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resized == nil {
		s.resized = make(chan [2]int, 1)
	}
	return s.resized
}

// Signal sends a signal to the session's command (from any goroutine).
func (s *Session) Signal(ctx context.Context, name string) error {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return errors.New("not connected")
	}
	return conn.Signal(ctx, name)
}

// Delete ends the session and its command, within a few seconds, whatever
// happened to the caller's context.
func (s *Session) Delete(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return s.DP.DeletePTY(dctx, s.ID)
}

// Run connects and relays until the session ends, its context does, or
// (without Reconnect) the connection is lost.
func (s *Session) Run(ctx context.Context) Result {
	input := s.readChunks()
	conn := s.first
	if conn == nil {
		if err := s.Connect(ctx); err != nil {
			return Result{Err: err}
		}
		conn = s.first
	}
	for {
		res := s.serve(ctx, conn, input)
		s.mu.Lock()
		unconfirmed := s.sent - s.ack
		s.mu.Unlock()
		s.setConn(nil)
		conn.Close()
		if res.Lost == nil || !s.Reconnect || ctx.Err() != nil {
			return res
		}
		if conn, res = s.reconnect(ctx, res.Lost, unconfirmed); conn == nil {
			return res
		}
	}
}

// Connect makes the first connection, for a caller that wants its error
// before Run (which otherwise makes it).
func (s *Session) Connect(ctx context.Context) error {
	conn, err := s.DP.DialPTY(ctx, s.ID, client.PTYDial{Pipe: !s.Terminal, Takeover: s.Takeover})
	s.first = conn
	return err
}

func (s *Session) setConn(c *client.PTYConn) {
	s.mu.Lock()
	s.conn, s.sent, s.acks, s.ack = c, 0, nil, 0
	s.mu.Unlock()
}

// readChunks streams Stdin in chunks; the channel is closed at its end
// (at once for a nil Stdin), after readErr is set for a read error.
func (s *Session) readChunks() <-chan []byte {
	ch := make(chan []byte, 16)
	if s.Stdin == nil {
		close(ch)
		return ch
	}
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := s.Stdin.Read(buf)
			if n > 0 {
				ch <- buf[:n]
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					s.readErr = &stdinError{err}
				}
				return
			}
		}
	}()
	return ch
}

// stdinError: the local input could not be read; the run ends with it.
type stdinError struct{ err error }

func (e *stdinError) Error() string { return "cannot read the input: " + e.err.Error() }
func (e *stdinError) Unwrap() error { return e.err }

type frameOrErr struct {
	f   *client.PTYFrame
	err error
}

// serve relays over one connection until it ends.
func (s *Session) serve(ctx context.Context, conn *client.PTYConn, input <-chan []byte) Result {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.setConn(conn)
	frames := make(chan frameOrErr, 16)
	var rd frameReader
	go rd.run(cctx, conn, frames)
	broken, unanswered := make(chan error, 1), make(chan error, 1)
	connected := make(chan struct{})
	s.connected = connected
	written := make(chan struct{})
	go func() {
		defer close(written)
		s.writeStdin(cctx, conn, connected, input, broken)
	}()
	// The writer is done before the next connection (or the end): input
	// it took and did not send waits for the next one, and what it sent
	// is counted before the loss is told.
	defer func() {
		cancel()
		<-written
	}()
	if s.Size != nil {
		if cols, rows, ok := s.Size(); ok {
			conn.Resize(cctx, cols, rows)
		}
	}
	keepAlive := time.NewTicker(KeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case fe := <-frames:
			res, over := s.frame(fe)
			fe.f.Release()
			if over {
				return res
			}
		case err := <-broken:
			if errors.As(err, new(*stdinError)) {
				return Result{Err: err}
			}
			// A write fails on a connection that is closing: what the
			// reader still gets (the exit frame, often) or its error
			// decides.
			broken = nil
		case err := <-unanswered:
			return Result{Lost: err}
		case sz := <-s.resizes():
			conn.Resize(cctx, sz[0], sz[1])
		case <-keepAlive.C:
			go func() {
				pctx, pcancel := context.WithTimeout(cctx, KeepAlive)
				defer pcancel()
				read := rd.read.Load()
				if err := conn.Alive(pctx); err != nil && cctx.Err() == nil && !rd.busy(read) {
					select {
					case unanswered <- fmt.Errorf("no answer to a ping: %w", err):
					default:
					}
				}
			}()
		case <-ctx.Done():
			return Result{Err: ctx.Err()}
		}
	}
}

// frameReader reads a connection's frames into a channel, and tells how
// far it got: a pong comes behind everything the server sent before it,
// so a ping goes unanswered for as long as the output ahead of it takes to
// read, and for as long as what was read waits for a slow consumer here.
type frameReader struct {
	read       atomic.Int64 // frames read
	delivering atomic.Bool  // a frame read waits to be taken
}

func (r *frameReader) run(ctx context.Context, conn *client.PTYConn, out chan<- frameOrErr) {
	for {
		f, err := conn.Next(ctx)
		r.read.Add(1)
		r.delivering.Store(true)
		select {
		case out <- frameOrErr{f, err}:
		case <-ctx.Done():
			return
		}
		r.delivering.Store(false)
		if err != nil {
			return
		}
	}
}

// busy reports that a ping sent when read frames had been read may have
// gone unanswered only because the connection was busy: frames came since,
// or one still waits to be taken. A lost connection brings nothing.
func (r *frameReader) busy(read int64) bool {
	return r.read.Load() != read || r.delivering.Load()
}

// writeStdin sends input as it comes, once the server said it is
// connected, then ends it where the server can. A chunk taken when the
// connection was already over waits for the next one.
func (s *Session) writeStdin(ctx context.Context, conn *client.PTYConn, connected <-chan struct{}, input <-chan []byte, broken chan<- error) {
	select {
	case <-ctx.Done():
		return
	case <-connected:
	}
	for {
		chunk, ok := s.pending, true
		s.pending = nil
		if chunk == nil {
			select {
			case <-ctx.Done():
				return
			case chunk, ok = <-input:
			}
		}
		if ctx.Err() != nil {
			s.pending = chunk
			return
		}
		var err error
		switch {
		case s.stopped():
			// The command no longer reads: what comes is dropped, as a
			// closed pipe drops it.
		case ok:
			err = s.send(ctx, conn, chunk)
		case s.readErr != nil:
			err = s.readErr
		case s.Terminal || s.end != nil: // a terminal has no end; a StartCommand input needs none
		case s.canEOF:
			err = conn.CloseStdin(ctx)
		}
		if err != nil && ctx.Err() == nil {
			broken <- err
			return
		}
		if !ok {
			return
		}
	}
}

func (s *Session) send(ctx context.Context, conn *client.PTYConn, chunk []byte) error {
	s.mu.Lock()
	s.sent += int64(len(chunk))
	sent := s.sent
	s.mu.Unlock()
	if err := conn.WriteStdin(ctx, chunk); err != nil || !s.Terminal {
		return err
	}
	s.mu.Lock()
	s.acks = append(s.acks, sent)
	s.mu.Unlock()
	return conn.Ping(ctx)
}

func (s *Session) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stdinOff
}

// frame handles one frame; over reports that the connection is done.
func (s *Session) frame(fe frameOrErr) (Result, bool) {
	if err := fe.err; err != nil {
		var closed *client.PTYClosedError
		switch {
		case errors.As(err, &closed) && closed.TakenOver():
			return Result{TakenOver: true}, true
		case errors.As(err, &closed):
			return Result{Lost: fmt.Errorf("the server closed the connection before the shell exited (%d %s)", closed.Code, closed.Reason)}, true
		}
		return Result{Lost: err}, true
	}
	var err error
	switch f := fe.f; f.Kind {
	case client.PTYConnected:
		if s.connected != nil {
			s.canEOF = s.canEOF || f.StdinEOF
			if !s.canEOF && !s.Terminal && s.end == nil && s.Stdin != nil {
				// Attached to a session osb did not start: said before any input goes.
				s.Out.Note("this sandbox's execd cannot end the remote command's input: a command that reads all of its stdin waits for more until it is stopped (Ctrl-C)")
			}
			close(s.connected)
			s.connected = nil
		}
	case client.PTYReplay:
		if gap := f.Offset - s.offset; gap > 0 {
			s.Out.Note(fmt.Sprintf("%d bytes of output were lost while disconnected", gap))
		}
		data := f.Data
		if skip := s.offset - f.Offset; skip > 0 {
			data = data[min(skip, int64(len(data))):]
		}
		s.offset = max(s.offset, f.Offset)
		err = s.output(false, data)
	case client.PTYStdout, client.PTYStderr:
		err = s.output(f.Kind == client.PTYStderr, f.Data)
	case client.PTYExit:
		return Result{Exited: true, ExitCode: f.ExitCode}, true
	case client.PTYPong:
		s.mu.Lock()
		if len(s.acks) > 0 {
			s.ack, s.acks = s.acks[0], s.acks[1:]
		}
		s.mu.Unlock()
	case client.PTYError:
		if f.Code == "STDIN_WRITE_FAILED" {
			s.mu.Lock()
			s.stdinOff = true
			s.mu.Unlock()
			if !s.canEOF {
				// A real execd stops serving the socket after this one.
				return Result{Lost: errors.New("the server stopped serving the connection after the command stopped reading its input")}, true
			}
			break
		}
		s.Out.Note(fmt.Sprintf("the server reported %s: %s", f.Code, f.Message))
	}
	if err != nil {
		return Result{Err: err}, true
	}
	if s.end != nil && s.end.done() {
		return Result{Exited: true, ExitCode: &s.end.code}, true
	}
	return Result{}, false
}

func (s *Session) output(stderr bool, data []byte) error {
	s.offset += int64(len(data))
	if s.end != nil {
		data = s.end.filter(stderr, data)
	}
	if len(data) == 0 {
		return nil
	}
	if stderr {
		return s.Out.Stderr(data)
	}
	return s.Out.Stdout(data)
}

// reconnect gets a lost terminal session back: it checks that the shell
// still runs, then connects again from the last byte received, taking the
// session over (the server may not have noticed the old connection died).
//
// Input sent and not confirmed (unconfirmed bytes) may not have arrived; it
// is not sent again, as it may have, and must not arrive twice: that is
// said. Input read since waits for the new connection.
func (s *Session) reconnect(ctx context.Context, cause error, unconfirmed int64) (*client.PTYConn, Result) {
	s.Out.Note(fmt.Sprintf("connection lost (%v); reconnecting...", cause))
	if unconfirmed > 0 {
		s.Out.Note(fmt.Sprintf("the last %d bytes of input sent may not have arrived: the connection broke before the server confirmed them", unconfirmed))
	}
	deadline := time.Now().Add(ReconnectFor)
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, RetryMax) {
		select {
		case <-ctx.Done():
			return nil, Result{Err: ctx.Err(), Detached: true}
		case <-time.After(wait):
		}
		st, err := s.DP.PTYSession(ctx, s.ID)
		switch {
		case client.IsStatus(err, http.StatusNotFound):
			return nil, Result{Err: fmt.Errorf("session %s was deleted while disconnected", s.ID)}
		case err == nil && !st.Running:
			if st.ExitCode == nil {
				return nil, Result{Err: fmt.Errorf("the shell of session %s ended while disconnected; its exit code is unknown", s.ID)}
			}
			return nil, Result{Exited: true, ExitCode: st.ExitCode}
		case err == nil:
			conn, derr := s.DP.DialPTY(ctx, s.ID, client.PTYDial{Since: s.offset, Takeover: true})
			if derr == nil {
				s.Out.Note("reconnected")
				return conn, Result{}
			}
			err = derr
		}
		if time.Now().After(deadline) {
			return nil, Result{Err: fmt.Errorf("could not reconnect within %s: %v", ReconnectFor, err), Detached: true}
		}
	}
}
