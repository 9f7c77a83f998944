package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
	"io"
	"math"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// hangupsFunc starts delivering SIGTERM and SIGHUP and returns a function
// that stops it. Tests replace it.
type hangupsFunc func() (<-chan os.Signal, func())

func notifyHangups() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// ptyRun is a PTY session as the command line runs it (ops.Session relays
// it): on a terminal (s.Terminal) the local terminal is raw for the whole
// run and a lost connection is taken up again; in pipe mode stdout and
// stderr stay apart and a lost connection ends the run (what was sent may
// not all have arrived, and execd's replay mixes stdout and stderr). Here
// are what only a command line has: signals, the timeout, -o json and
// exit codes.
type ptyRun struct {
	ios        *iostreams.IOStreams
	s          *ops.Session
	sandbox    string        // as the user named it, for hints
	owned      bool          // created for this run: deleted once it ended
	collect    bool          // -o json: output kept for the result object
	filter     output.Filter // --jq or --template, for that object
	timeout    time.Duration // the remote command is killed after this; 0: never
	interrupts interruptsFunc
	hangups    hangupsFunc

	mu       sync.Mutex
	out, err bytes.Buffer
	writeErr error // stdout or stderr went away
	started  time.Time

	stopping bool // Ctrl-C: the remote command was asked to stop
	presses  int  // Ctrl-C presses seen
	stopAt   <-chan time.Time
}

// run relays the session until it ends. It returns nil or an error
// carrying osb's exit code.
func (r *ptyRun) run(ctx context.Context) error {
	r.started = time.Now()
	tty := r.s.Terminal
	if tty {
		restore, err := r.ios.MakeRaw()
		if err != nil {
			return osbFailed(fmt.Errorf("cannot put the terminal in raw mode: %w", err))
		}
		defer restore()
		r.s.Size, r.s.Reconnect = r.ios.TerminalSize, true
		defer r.ios.WatchResize(r.s.Resize)()
	}
	r.s.Out = r
	presses, stopInterrupts := r.interrupts()
	defer stopInterrupts()
	hangups, stopHangups := r.hangups()
	defer stopHangups()
	// The session's own context: the first Ctrl-C cancels ctx, and in pipe
	// mode it only asks the remote command to stop.
	sctx, end := context.WithCancel(context.WithoutCancel(ctx))
	defer end()
	over, controlled := make(chan struct{}), make(chan error, 1)
	go func() { controlled <- r.control(ctx, over, end, presses, hangups) }()
	res := r.s.Run(sctx)
	close(over)
	// What control decided (a timeout, a signal) wins over how the
	// session ended meanwhile: osb killed it.
	if final := <-controlled; final != nil {
		return final
	}
	switch {
	case res.Exited:
		return r.finish(res.ExitCode)
	case r.writeErr != nil:
		r.kill()
		return r.outputFailed()
	case res.TakenOver:
		return r.fail(fmt.Errorf("another client took session %s over; it goes on there", r.s.ID))
	case res.Lost != nil:
		return r.fail(fmt.Errorf("the connection to session %s was lost (%v); the remote command goes on: %s", r.s.ID, res.Lost, r.hint()))
	case res.Detached:
		return r.fail(fmt.Errorf("%w; %s", res.Err, r.hint()))
	}
	return r.fail(res.Err)
}

// control turns signals and the timeout into the end of the run: it
// returns osb's exit (after ending the session's context), or nil once the
// session is over by itself.
func (r *ptyRun) control(ctx context.Context, over <-chan struct{}, end context.CancelFunc, presses, hangups <-chan os.Signal) error {
	var timeout <-chan time.Time
	if r.timeout > 0 {
		timeout = time.After(time.Until(r.started.Add(r.timeout)))
	}
	cancelled := ctx.Done()
	for {
		var final error
		select {
		case <-over:
			return nil
		case <-timeout:
			r.kill()
			final = r.failWith(ops.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s and was killed", r.timeout))
		case sig := <-hangups:
			final = r.hangup(sig)
		case <-cancelled:
			// The first Ctrl-C also cancels ctx (and so does SIGTERM, which
			// comes on hangups too): on a terminal only signals count.
			cancelled = nil
			if !r.s.Terminal {
				final = r.interrupt(context.WithoutCancel(ctx), false)
			}
		case sig := <-presses:
			if r.s.Terminal {
				final = r.hangup(sig)
			} else {
				final = r.interrupt(context.WithoutCancel(ctx), true)
			}
		case <-r.stopAt:
			r.kill()
			final = r.interrupted("Interrupted: session " + r.s.ID + " did not stop in time and was killed.")
		}
		if final != nil {
			end()
			return final
		}
	}
}

// hint says how to get back to the session.
func (r *ptyRun) hint() string {
	return fmt.Sprintf("'osb command shell %s --session %s' attaches to it, 'osb command shell kill %s %s' ends it", r.sandbox, r.s.ID, r.sandbox, r.s.ID)
}

// Stdout, Stderr and Note are the session's output (ops.Output).
func (r *ptyRun) Stdout(p []byte) error { return r.output(&r.out, r.ios.Out, p) }
func (r *ptyRun) Stderr(p []byte) error { return r.output(&r.err, r.ios.ErrOut, p) }

func (r *ptyRun) output(buf *bytes.Buffer, w io.Writer, p []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.collect {
		buf.Write(p)
		return nil
	}
	if r.writeErr == nil {
		if _, err := w.Write(p); err != nil {
			r.writeErr = err
		}
	}
	return r.writeErr
}

// Note tells the user something on stderr, on its own line even in raw mode.
func (r *ptyRun) Note(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s.Terminal {
		fmt.Fprintf(r.ios.ErrOut, "\r\nosb: %s\r\n", msg)
		return
	}
	format := output.Raw
	if r.collect {
		format = output.JSONF
	}
	output.WriteWarning(r.ios, format, msg)
}

// say writes a line on stderr, between the session's own writes.
func (r *ptyRun) say(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.ios.ErrOut, msg)
}

// interrupt handles Ctrl-C (and osb's own cancellation) in pipe mode: the
// first asks the remote command to stop (SIGINT), the next stops waiting
// for it. A non-nil error ends the run with it.
func (r *ptyRun) interrupt(ctx context.Context, press bool) error {
	if press {
		if r.presses++; r.presses >= 2 {
			r.kill()
			return r.interrupted("Interrupted again: not waiting for session " + r.s.ID + " to stop.")
		}
	}
	if r.stopping {
		return nil
	}
	r.stopping, r.stopAt = true, time.After(interruptGrace)
	if !r.collect {
		r.say("Stopping the remote command (Ctrl-C again to stop waiting)...")
	}
	if err := r.s.Signal(ctx, "SIGINT"); err != nil {
		r.kill()
		return r.interrupted("Interrupted: session " + r.s.ID + " was killed.")
	}
	return nil
}

// hangup ends the run on SIGTERM or SIGHUP: a terminal session stays for
// later; a command run by osb is stopped.
func (r *ptyRun) hangup(sig os.Signal) error {
	code := ops.ExitInterrupted
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	if r.s.Terminal {
		r.Note(fmt.Sprintf("%v: detached from session %s, which goes on: %s", sig, r.s.ID, r.hint()))
		return ops.Silent(code)
	}
	r.kill()
	return ops.Silent(code)
}

// kill ends the session's shell if osb created it.
func (r *ptyRun) kill() {
	if r.owned {
		r.s.Delete(context.Background())
	}
}

// finish turns the exit frame into osb's exit code.
func (r *ptyRun) finish(code *int) error {
	r.kill() // the shell is gone: this only frees the session
	if r.collect {
		res := result{ExecutionID: r.s.ID, ExitCode: code, Duration: math.Round(time.Since(r.started).Seconds()*1000) / 1000}
		p := output.New(r.ios, output.JSONF)
		p.Filter = r.filter
		if err := writeResult(p, res, held(r.out.Bytes()), held(r.err.Bytes())); err != nil {
			return err
		}
	}
	switch {
	case r.stopping:
		return r.interrupted("Interrupted: session " + r.s.ID + " was stopped.")
	case code == nil:
		return r.fail(errors.New("the shell ended without an exit code"))
	case *code == -1:
		return r.fail(errors.New("the shell was killed by a signal"))
	case *code < 0 || *code > 255:
		return r.fail(fmt.Errorf("the server reported exit code %d", *code))
	case *code == 0:
		return nil
	}
	return ops.Silent(*code)
}

// outputFailed ends a run whose output went away: 141 for a closed pipe.
func (r *ptyRun) outputFailed() error {
	if errors.Is(r.writeErr, syscall.EPIPE) || errors.Is(r.writeErr, io.ErrClosedPipe) {
		return ops.Silent(exitBrokenPipe)
	}
	return r.fail(fmt.Errorf("cannot write the command's output: %w", r.writeErr))
}

func (r *ptyRun) fail(err error) error { return r.failWith(ops.ExitOsbFailed, err) }

func (r *ptyRun) failWith(code int, err error) error {
	if r.s.Terminal {
		// The terminal is raw until run returns: the line must end itself.
		r.Note(err.Error())
		return ops.Silent(code)
	}
	return &ops.ExitError{Code: code, Err: err}
}

func (r *ptyRun) interrupted(msg string) error {
	if r.collect {
		return &ops.ExitError{Code: ops.ExitInterrupted, Err: errors.New(msg)}
	}
	if r.s.Terminal {
		r.Note(msg)
	} else {
		r.say(msg)
	}
	return ops.Silent(ops.ExitInterrupted)
}
