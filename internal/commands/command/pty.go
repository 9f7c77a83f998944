package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/output"
)

// Timings of a PTY session's client; variables so that tests can shorten them.
var (
	ptyKeepAlive    = 20 * time.Second // a WebSocket ping this often; no answer within as long means the connection is lost
	ptyReconnectFor = 2 * time.Minute  // how long osb tries to get a lost connection back
	ptyRetryMax     = 5 * time.Second  // the longest wait between two tries
)

// hangupsFunc starts delivering SIGTERM and SIGHUP and returns a function
// that stops it. Tests replace it.
type hangupsFunc func() (<-chan os.Signal, func())

func notifyHangups() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// ptyRun drives one PTY session over its WebSocket: local stdin and window
// size go to it, its output comes back, and its end becomes osb's exit
// code. On a terminal (tty) the local terminal is raw for the whole run,
// and a lost connection is reconnected, replaying what was missed. In
// pipe mode stdout and stderr stay apart and stdin is streamed and then
// ended; a lost connection ends the run (what was sent may not all have
// arrived, and execd's replay mixes stdout and stderr).
type ptyRun struct {
	ios        *iostreams.IOStreams
	dp         *client.DataPlane
	id         string        // the session
	sandbox    string        // as the user named it, for hints
	tty        bool          // a local terminal in raw mode; else pipe mode
	owned      bool          // created for this run: deleted once it ended
	takeover   bool          // the first connection evicts the session's client
	stdin      io.Reader     // streamed to the session; nil: nothing
	collect    bool          // -o json: output kept for the result object
	filter     output.Filter // --jq or --template, for that object
	timeout    time.Duration // the remote command is killed after this; 0: never
	interrupts interruptsFunc
	hangups    hangupsFunc

	offset   int64 // output received, by the server's count
	out, err bytes.Buffer
	writeErr error // stdout or stderr went away
	started  time.Time

	stopping bool // Ctrl-C: the remote command was asked to stop
	presses  int  // Ctrl-C presses seen
	stopAt   <-chan time.Time
}

// ptyOutcome is how one connection ended.
type ptyOutcome struct {
	exitCode  *int // the exit frame came; nil inside means it carried none
	exited    bool
	takenOver bool
	lost      error // the connection broke
	final     error // the run is over with this (an exit code error or nil)
	done      bool
}

// run connects and relays until the session ends, reconnecting on a
// terminal. It returns nil or an error carrying osb's exit code.
func (r *ptyRun) run(ctx context.Context) error {
	r.started = time.Now()
	if r.tty {
		restore, err := r.ios.MakeRaw()
		if err != nil {
			return osbFailed(fmt.Errorf("cannot put the terminal in raw mode: %w", err))
		}
		defer restore()
	}
	presses, stopInterrupts := r.interrupts()
	defer stopInterrupts()
	hangups, stopHangups := r.hangups()
	defer stopHangups()
	input := r.readStdin()
	conn, err := r.dp.DialPTY(ctx, r.id, client.PTYDial{Pipe: !r.tty, Takeover: r.takeover})
	if err != nil {
		return osbFailed(err)
	}
	for {
		res := r.serve(ctx, conn, input, presses, hangups)
		conn.Close()
		if res.done {
			return res.final
		}
		if res.exited {
			return r.finish(res.exitCode)
		}
		if res.takenOver {
			return r.fail(fmt.Errorf("another client took session %s over; it goes on there", r.id))
		}
		if !r.tty {
			return r.fail(fmt.Errorf("the connection to session %s was lost (%v); the remote command goes on: %s", r.id, res.lost, r.hint()))
		}
		if conn, res = r.reconnect(ctx, res.lost, hangups); conn == nil {
			if res.exited {
				return r.finish(res.exitCode)
			}
			return res.final
		}
	}
}

// hint says how to get back to the session.
func (r *ptyRun) hint() string {
	return fmt.Sprintf("'osb command shell %s --session %s' attaches to it, 'osb command shell kill %s %s' ends it", r.sandbox, r.id, r.sandbox, r.id)
}

// readStdin streams stdin in chunks; a nil chunk marks its end.
func (r *ptyRun) readStdin() <-chan []byte {
	ch := make(chan []byte, 16)
	if r.stdin == nil {
		close(ch)
		return ch
	}
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := r.stdin.Read(buf)
			if n > 0 {
				ch <- buf[:n]
			}
			if err != nil {
				ch <- nil
				return
			}
		}
	}()
	return ch
}

// serve relays over one connection until it ends.
func (r *ptyRun) serve(ctx context.Context, conn *client.PTYConn, input <-chan []byte, presses, hangups <-chan os.Signal) ptyOutcome {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	frames := make(chan ptyFrame, 16)
	go r.readFrames(cctx, conn, frames)
	broken := make(chan error, 2)
	go r.writeStdin(cctx, conn, input, broken)
	resized := make(chan [2]int, 1)
	if r.tty {
		if cols, rows, ok := r.ios.TerminalSize(); ok {
			conn.Resize(cctx, cols, rows)
		}
		stop := r.ios.WatchResize(func(cols, rows int) {
			select {
			case resized <- [2]int{cols, rows}:
			default:
			}
		})
		defer stop()
	}
	keepAlive := time.NewTicker(ptyKeepAlive)
	defer keepAlive.Stop()
	var timeout <-chan time.Time
	if r.timeout > 0 {
		timeout = time.After(time.Until(r.started.Add(r.timeout)))
	}
	cancelled := ctx.Done()
	for {
		select {
		case f := <-frames:
			if res, over := r.frame(f); over {
				return res
			}
		case err := <-broken:
			return ptyOutcome{lost: err}
		case sz := <-resized:
			conn.Resize(cctx, sz[0], sz[1])
		case <-keepAlive.C:
			go func() {
				pctx, pcancel := context.WithTimeout(cctx, ptyKeepAlive)
				defer pcancel()
				if err := conn.Alive(pctx); err != nil && cctx.Err() == nil {
					broken <- fmt.Errorf("no answer to a ping: %w", err)
				}
			}()
		case <-timeout:
			r.kill()
			return ptyOutcome{done: true, final: r.failWith(cmdutil.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s and was killed", r.timeout))}
		case sig := <-hangups:
			return ptyOutcome{done: true, final: r.hangup(sig)}
		case <-cancelled:
			// The first Ctrl-C also cancels ctx (and so does SIGTERM, which
			// comes on hangups too): on a terminal only signals count.
			cancelled = nil
			if res, over := r.interrupt(cctx, conn, false); !r.tty && over {
				return res
			}
		case sig := <-presses:
			if r.tty {
				return ptyOutcome{done: true, final: r.hangup(sig)}
			}
			if res, over := r.interrupt(cctx, conn, true); over {
				return res
			}
		case <-r.stopAt:
			r.kill()
			return ptyOutcome{done: true, final: r.interrupted("Interrupted: session " + r.id + " did not stop in time and was killed.")}
		}
	}
}

type ptyFrame struct {
	f   *client.PTYFrame
	err error
}

func (r *ptyRun) readFrames(ctx context.Context, conn *client.PTYConn, out chan<- ptyFrame) {
	for {
		f, err := conn.Next(ctx)
		select {
		case out <- ptyFrame{f, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// writeStdin sends input as it comes, then ends it (pipe mode).
func (r *ptyRun) writeStdin(ctx context.Context, conn *client.PTYConn, input <-chan []byte, broken chan<- error) {
	for {
		select {
		case <-ctx.Done():
			return
		case chunk, ok := <-input:
			var err error
			switch {
			case !ok:
				return
			case chunk == nil && !r.tty:
				err = conn.CloseStdin(ctx)
			case chunk != nil:
				err = conn.WriteStdin(ctx, chunk)
			}
			if err != nil && ctx.Err() == nil {
				broken <- err
				return
			}
		}
	}
}

// frame handles one frame; over reports the connection is done.
func (r *ptyRun) frame(pf ptyFrame) (ptyOutcome, bool) {
	if err := pf.err; err != nil {
		var closed *client.PTYClosedError
		switch {
		case errors.As(err, &closed) && closed.TakenOver():
			return ptyOutcome{takenOver: true}, true
		case errors.As(err, &closed):
			return ptyOutcome{lost: fmt.Errorf("the server closed the connection before the shell exited (%d %s)", closed.Code, closed.Reason)}, true
		}
		return ptyOutcome{lost: err}, true
	}
	f := pf.f
	switch f.Kind {
	case client.PTYReplay:
		if gap := f.Offset - r.offset; gap > 0 {
			r.note(fmt.Sprintf("%d bytes of output were lost while disconnected", gap))
		}
		data := f.Data
		if skip := r.offset - f.Offset; skip > 0 {
			data = data[min(skip, int64(len(data))):]
		}
		r.offset = max(r.offset, f.Offset)
		r.output(client.PTYStdout, data)
	case client.PTYStdout, client.PTYStderr:
		r.output(f.Kind, f.Data)
	case client.PTYExit:
		return ptyOutcome{exited: true, exitCode: f.ExitCode}, true
	case client.PTYError:
		if f.Code == "INVALID_FRAME" && bytes.Contains([]byte(f.Message), []byte("stdin_eof")) {
			r.note("this sandbox's execd cannot end the remote command's input: a command that reads all of its stdin waits for more until it is stopped (Ctrl-C)")
			break
		}
		r.note(fmt.Sprintf("the server reported %s: %s", f.Code, f.Message))
	}
	if r.writeErr != nil {
		r.kill()
		return ptyOutcome{done: true, final: r.outputFailed()}, true
	}
	return ptyOutcome{}, false
}

func (r *ptyRun) output(kind client.PTYFrameKind, data []byte) {
	if len(data) == 0 {
		return
	}
	r.offset += int64(len(data))
	buf, w := &r.out, r.ios.Out
	if kind == client.PTYStderr {
		buf, w = &r.err, r.ios.ErrOut
	}
	if r.collect {
		buf.Write(data)
		return
	}
	if r.writeErr != nil {
		return
	}
	if _, err := w.Write(data); err != nil {
		r.writeErr = err
	}
}

// note tells the user something on stderr, on its own line even in raw mode.
func (r *ptyRun) note(msg string) {
	if r.tty {
		fmt.Fprintf(r.ios.ErrOut, "\r\nosb: %s\r\n", msg)
		return
	}
	output.WriteWarning(r.ios, r.format(), msg)
}

func (r *ptyRun) format() string {
	if r.collect {
		return output.JSONF
	}
	return output.Raw
}

// interrupt handles Ctrl-C (and osb's own cancellation): the first asks the
// remote command to stop (SIGINT), the next stops waiting for it.
func (r *ptyRun) interrupt(ctx context.Context, conn *client.PTYConn, press bool) (ptyOutcome, bool) {
	if r.tty {
		return ptyOutcome{}, false
	}
	if press {
		if r.presses++; r.presses >= 2 {
			r.kill()
			return ptyOutcome{done: true, final: r.interrupted("Interrupted again: not waiting for session " + r.id + " to stop.")}, true
		}
	}
	if r.stopping {
		return ptyOutcome{}, false
	}
	r.stopping, r.stopAt = true, time.After(interruptGrace)
	if !r.collect {
		fmt.Fprintln(r.ios.ErrOut, "Stopping the remote command (Ctrl-C again to stop waiting)...")
	}
	if err := conn.Signal(ctx, "SIGINT"); err != nil {
		r.kill()
		return ptyOutcome{done: true, final: r.interrupted("Interrupted: session " + r.id + " was killed.")}, true
	}
	return ptyOutcome{}, false
}

// hangup ends the run on SIGTERM or SIGHUP: a terminal session stays for
// later; a command run by osb is stopped.
func (r *ptyRun) hangup(sig os.Signal) error {
	code := cmdutil.ExitInterrupted
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	if r.tty {
		r.note(fmt.Sprintf("%v: detached from session %s, which goes on: %s", sig, r.id, r.hint()))
		return cmdutil.Silent(code)
	}
	r.kill()
	return cmdutil.Silent(code)
}

// kill ends the session's shell if osb created it.
func (r *ptyRun) kill() {
	if !r.owned {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), interruptGrace)
	defer cancel()
	r.dp.DeletePTY(ctx, r.id)
}

// reconnect gets a lost terminal session back: it checks that the shell
// still runs, then connects again from the last byte received, taking the
// session over (the server may not have noticed the old connection died).
func (r *ptyRun) reconnect(ctx context.Context, cause error, hangups <-chan os.Signal) (*client.PTYConn, ptyOutcome) {
	r.note(fmt.Sprintf("connection lost (%v); reconnecting...", cause))
	deadline := time.Now().Add(ptyReconnectFor)
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, ptyRetryMax) {
		select {
		case sig := <-hangups:
			return nil, ptyOutcome{done: true, final: r.hangup(sig)}
		case <-ctx.Done():
			return nil, ptyOutcome{done: true, final: r.interrupted("Interrupted: detached from session " + r.id + ".")}
		case <-time.After(wait):
		}
		st, err := r.dp.PTYSession(ctx, r.id)
		switch {
		case client.IsStatus(err, http.StatusNotFound):
			return nil, ptyOutcome{done: true, final: r.fail(fmt.Errorf("session %s was deleted while disconnected", r.id))}
		case err == nil && !st.Running:
			if st.ExitCode == nil {
				return nil, ptyOutcome{done: true, final: r.fail(fmt.Errorf("the shell of session %s ended while disconnected; its exit code is unknown", r.id))}
			}
			return nil, ptyOutcome{exited: true, exitCode: st.ExitCode}
		case err == nil:
			conn, derr := r.dp.DialPTY(ctx, r.id, client.PTYDial{Since: r.offset, Takeover: true})
			if derr == nil {
				r.note("reconnected")
				return conn, ptyOutcome{}
			}
			err = derr
		}
		if time.Now().After(deadline) {
			return nil, ptyOutcome{done: true, final: r.fail(fmt.Errorf("could not reconnect within %s: %v; %s", ptyReconnectFor, err, r.hint()))}
		}
	}
}

// finish turns the exit frame into osb's exit code.
func (r *ptyRun) finish(code *int) error {
	if r.owned {
		r.kill() // the shell is gone: this only frees the session
	}
	if r.collect {
		res := result{ExecutionID: r.id, ExitCode: code, Duration: math.Round(time.Since(r.started).Seconds()*1000) / 1000}
		p := output.New(r.ios, output.JSONF)
		p.Filter = r.filter
		if err := writeResult(p, res, held(r.out.Bytes()), held(r.err.Bytes())); err != nil {
			return err
		}
	}
	switch {
	case r.stopping:
		return r.interrupted("Interrupted: session " + r.id + " was stopped.")
	case code == nil:
		return r.fail(errors.New("the shell ended without an exit code"))
	case *code == -1:
		return r.fail(errors.New("the shell was killed by a signal"))
	case *code < 0 || *code > 255:
		return r.fail(fmt.Errorf("the server reported exit code %d", *code))
	case *code == 0:
		return nil
	}
	return cmdutil.Silent(*code)
}

// outputFailed ends a run whose output went away: 141 for a closed pipe.
func (r *ptyRun) outputFailed() error {
	if errors.Is(r.writeErr, syscall.EPIPE) || errors.Is(r.writeErr, io.ErrClosedPipe) {
		return cmdutil.Silent(exitBrokenPipe)
	}
	return r.fail(fmt.Errorf("cannot write the command's output: %w", r.writeErr))
}

func (r *ptyRun) fail(err error) error { return r.failWith(cmdutil.ExitOsbFailed, err) }

func (r *ptyRun) failWith(code int, err error) error {
	if r.tty {
		// The terminal is raw until run returns: the line must end itself.
		r.note(err.Error())
		return cmdutil.Silent(code)
	}
	return &cmdutil.ExitError{Code: code, Err: err}
}

func (r *ptyRun) interrupted(msg string) error {
	if r.collect {
		return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: errors.New(msg)}
	}
	if r.tty {
		r.note(msg)
	} else {
		fmt.Fprintln(r.ios.ErrOut, msg)
	}
	return cmdutil.Silent(cmdutil.ExitInterrupted)
}
