package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/output"
)

// interruptGrace is how long osb waits, once it has asked the server to
// stop the remote command, for the stream to show that it ended.
var interruptGrace = 5 * time.Second

// interruptsFunc starts delivering Ctrl-C presses and returns a function
// that stops it. Tests replace it with a channel of their own.
type interruptsFunc func() (<-chan os.Signal, func())

// notifyInterrupts counts Ctrl-C presses itself. The first press also
// cancels the command's context (commands.Main uses signal.NotifyContext),
// but a context is cancelled once: only a count of the presses seen here
// tells a second press, which must not wait for anything, from the first.
// Counting on one channel also avoids racing the context against it.
//
// It also takes SIGPIPE for the run: then a write to a closed stdout (osb
// piped into head) fails with EPIPE instead of killing osb at once, and
// the run can stop the remote command before it exits.
func notifyInterrupts() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt)
	pipe := make(chan os.Signal, 1) // never read: only its registration matters
	signal.Notify(pipe, syscall.SIGPIPE)
	return ch, func() { signal.Stop(ch); signal.Stop(pipe) }
}

// exitBrokenPipe is how a shell reports a command killed by SIGPIPE.
const exitBrokenPipe = 128 + int(syscall.SIGPIPE)

// result is what a foreground run prints under -o json.
type result struct {
	ExecutionID string       `json:"execution_id"`
	ExitCode    *int         `json:"exit_code"` // as the server reported it: -1 when killed; null when unknown
	Stdout      string       `json:"stdout"`
	Stderr      string       `json:"stderr"`
	Error       *resultError `json:"error"`
	Duration    float64      `json:"duration"` // seconds, from the request to the terminal event
}

type resultError struct {
	Name      string   `json:"name"`
	Value     string   `json:"value"`
	Traceback []string `json:"traceback"`
}

// foreground follows one execution stream (POST /command or a session run)
// to its terminal event, writing output as it arrives, and turns the end
// into an exit code: the remote one, 124 for a timeout, 125 when osb could
// not learn it, 130 when interrupted.
type foreground struct {
	ios        *iostreams.IOStreams
	format     string        // raw or json
	filter     output.Filter // --jq or --template, under json
	timeout    time.Duration // the run's timeout; 0: none
	session    bool          // a session run: stopping it closes the session
	open       func(ctx context.Context) (*client.EventStream, error)
	stop       func(ctx context.Context, id string) error
	interrupts interruptsFunc

	res            result
	stdout, stderr bytes.Buffer // -o json only
	last           byte         // last byte written, for the final newline
	wrote          bool

	// Where the output goes failed (a closed pipe): the command is
	// stopped, as with Ctrl-C but without a word on the terminal.
	writeErr error

	// A Ctrl-C in progress.
	stopping bool             // the user wants the command stopped
	stopSent bool             // and the server was asked to
	presses  int              // Ctrl-C presses seen on the interrupts channel
	grace    <-chan time.Time // how long the stop may take
	stopDone chan error       // the stop request's outcome
	stopErr  error
}

type item struct {
	ev  *client.Event
	err error
}

// run returns nil when the remote command succeeded, otherwise an error
// carrying the exit code (cmdutil.ExitError).
func (fg *foreground) run(ctx context.Context) error {
	presses, release := fg.interrupts()
	defer release()
	// The stream must survive the first Ctrl-C (which cancels ctx): the
	// terminal event that confirms the stop comes through it.
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	items := make(chan item, 16)
	start := time.Now()
	go fg.read(streamCtx, items)
	fg.stopDone = make(chan error, 1)
	cancelled := ctx.Done()
	for {
		select {
		case it := <-items:
			if done, err := fg.handle(it, time.Since(start)); done {
				return err
			}
			if fg.writeErr != nil || it.ev.Type == client.EventInit && fg.stopping {
				fg.requestStop(streamCtx) // output broke, or Ctrl-C came before the id
			}
		case <-cancelled:
			cancelled = nil
			fg.requestStop(streamCtx)
		case <-presses:
			if fg.presses++; fg.presses >= 2 {
				return fg.interrupted(fmt.Sprintf("Interrupted again: not waiting for %s to stop.", fg.target()))
			}
			fg.requestStop(streamCtx)
		case fg.stopErr = <-fg.stopDone:
		case <-fg.grace:
			if fg.writeErr != nil {
				return fg.outputFailed()
			}
			msg := fmt.Sprintf("Interrupted: %s did not stop within %s", fg.target(), interruptGrace)
			if fg.stopErr != nil {
				msg += ": " + fg.stopErr.Error()
			}
			return fg.interrupted(msg + ".")
		}
	}
}

// handle takes one stream item; done reports that the run is over.
func (fg *foreground) handle(it item, took time.Duration) (done bool, err error) {
	if it.err != nil {
		return true, fg.broken(it.err)
	}
	switch ev := it.ev; {
	case ev.Type == client.EventInit:
		fg.res.ExecutionID = ev.Text
	case ev.Type == client.EventStdout || ev.Type == client.EventStderr:
		fg.output(ev)
	case ev.Terminal():
		return true, fg.finish(ev, took)
	}
	return false, nil
}

// requestStop starts stopping the remote command: once the user asked,
// and as soon as its id is known, the server is asked to interrupt it.
func (fg *foreground) requestStop(ctx context.Context) {
	if !fg.stopping {
		fg.stopping, fg.grace = true, time.After(interruptGrace)
		if fg.format != output.JSONF && fg.writeErr == nil {
			fmt.Fprintln(fg.ios.ErrOut, "Stopping the remote command (Ctrl-C again to stop waiting)...")
		}
	}
	if id := fg.res.ExecutionID; id != "" && !fg.stopSent {
		fg.stopSent = true
		go func() {
			sctx, cancel := context.WithTimeout(ctx, interruptGrace)
			defer cancel()
			fg.stopDone <- fg.stop(sctx, id)
		}()
	}
}

// read opens the stream and passes its events on until the terminal one,
// then closes it: the server may hold it open for a while after.
func (fg *foreground) read(ctx context.Context, out chan<- item) {
	send := func(it item) bool {
		select {
		case out <- it:
			return true
		case <-ctx.Done():
			return false
		}
	}
	stream, err := fg.open(ctx)
	if err != nil {
		send(item{err: err})
		return
	}
	defer stream.Close()
	for {
		ev, err := stream.Next()
		if !send(item{ev, err}) || err != nil || ev.Terminal() {
			return
		}
	}
}

func (fg *foreground) output(ev *client.Event) {
	if len(ev.Data) == 0 {
		return
	}
	out, w := &fg.stdout, fg.ios.Out
	if ev.Type == client.EventStderr {
		out, w = &fg.stderr, fg.ios.ErrOut
	}
	if fg.format == output.JSONF {
		out.Write(ev.Data)
		return
	}
	if fg.writeErr != nil {
		return // no one reads it any more
	}
	if _, err := w.Write(ev.Data); err != nil {
		fg.writeErr = err
		return
	}
	fg.last, fg.wrote = ev.Data[len(ev.Data)-1], true
}

// outputFailed ends a run whose output could not be written: like a
// command killed by SIGPIPE (exit 141, nothing said) when its reader went
// away, otherwise with the error.
func (fg *foreground) outputFailed() error {
	if errors.Is(fg.writeErr, syscall.EPIPE) || errors.Is(fg.writeErr, io.ErrClosedPipe) {
		return cmdutil.Silent(exitBrokenPipe)
	}
	return fg.fail(cmdutil.ExitOsbFailed, fmt.Errorf("cannot write the command's output: %w", fg.writeErr))
}

// endLine writes the official client's final newline: one, to stdout, when
// the last output (from either stream) did not end with one.
func (fg *foreground) endLine() {
	if fg.format == output.Raw && fg.wrote && fg.last != '\n' && fg.writeErr == nil {
		io.WriteString(fg.ios.Out, "\n")
		fg.last = '\n'
	}
}

func (fg *foreground) finish(ev *client.Event, took time.Duration) error {
	fg.endLine()
	code, known := ev.ExitCode()
	if known {
		fg.res.ExitCode = &code
	}
	if e := ev.Error; e != nil {
		fg.res.Error = &resultError{Name: e.Name, Value: e.Value, Traceback: append([]string{}, e.Traceback...)}
	}
	fg.res.Duration = math.Round(took.Seconds()*1000) / 1000
	if fg.format == output.JSONF {
		fg.res.Stdout, fg.res.Stderr = fg.stdout.String(), fg.stderr.String()
		p := output.New(fg.ios, output.JSONF)
		p.Filter = fg.filter
		if err := p.Data(fg.res); err != nil {
			return err
		}
	}
	if fg.writeErr != nil {
		return fg.outputFailed()
	}
	if fg.stopping {
		return fg.interrupted("Interrupted: " + fg.stopped())
	}
	return fg.exitStatus(ev, code, known)
}

// exitStatus maps the terminal event to osb's exit code.
func (fg *foreground) exitStatus(ev *client.Event, code int, known bool) error {
	e := ev.Error
	switch {
	case ev.Type == client.EventComplete:
		return nil
	case ev.Type == client.EventServerError:
		// execd ends a timed-out session run this way.
		if fg.timeout > 0 && strings.Contains(e.Value, "timeout") {
			return fg.fail(cmdutil.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s and was stopped (%s)", fg.timeout, e.Value))
		}
		return fg.fail(cmdutil.ExitOsbFailed, fmt.Errorf("the server failed the command: %s: %s", e.Name, e.Value))
	case !known && e.Value == "":
		return fg.fail(cmdutil.ExitOsbFailed, errors.New(noDetails))
	case !known:
		return fg.fail(cmdutil.ExitOsbFailed, fmt.Errorf("the command could not start: %s", e.Value))
	case code == -1:
		// A timeout kills with SIGKILL; another signal is someone else's doing.
		sig := signalNumber(e.Traceback)
		if fg.timeout > 0 && (sig == 0 || sig == int(syscall.SIGKILL)) {
			return fg.fail(cmdutil.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s and was killed", fg.timeout))
		}
		how := strings.Join(e.Traceback, "; ")
		if sig > 0 {
			return fg.fail(128+sig, fmt.Errorf("the command was killed (%s)", how))
		}
		return fg.fail(cmdutil.ExitOsbFailed, fmt.Errorf("the command was killed (%s)", how))
	case code < 0 || code > 255:
		return fg.fail(cmdutil.ExitOsbFailed, fmt.Errorf("the server reported exit code %d", code))
	}
	return cmdutil.Silent(code)
}

// signalNumber reads execd's "signal: killed" traceback as a signal number,
// so that a command killed by a signal exits like a shell reports it (128+n).
func signalNumber(traceback []string) int {
	for _, line := range traceback {
		name, ok := strings.CutPrefix(line, "signal: ")
		if !ok {
			continue
		}
		for s := syscall.Signal(1); s < 32; s++ {
			if s.String() == name {
				return int(s)
			}
		}
	}
	return 0
}

// broken handles a stream that failed or ended before its terminal event.
func (fg *foreground) broken(err error) error {
	fg.endLine()
	if fg.writeErr != nil {
		return fg.outputFailed()
	}
	if fg.stopping {
		return fg.interrupted("Interrupted: " + fg.stopped())
	}
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("the server closed the stream before %s finished", fg.target())
	}
	return fg.fail(cmdutil.ExitOsbFailed, err)
}

func (fg *foreground) fail(code int, err error) error {
	return &cmdutil.ExitError{Code: code, Err: err}
}

// interrupted ends the run with 130: a plain line on stderr, or under -o
// json the usual error object.
func (fg *foreground) interrupted(msg string) error {
	fg.endLine()
	if fg.format == output.JSONF {
		return fg.fail(cmdutil.ExitInterrupted, errors.New(msg))
	}
	fmt.Fprintln(fg.ios.ErrOut, msg)
	return cmdutil.Silent(cmdutil.ExitInterrupted)
}

// target names what is being run, for messages.
func (fg *foreground) target() string {
	id := fg.res.ExecutionID
	switch {
	case id == "":
		return "the command (its id never arrived)"
	case fg.session:
		return "the command in session " + id
	}
	return "command " + id
}

func (fg *foreground) stopped() string {
	if fg.session {
		return fg.target() + " was stopped by closing the session."
	}
	return fg.target() + " was stopped."
}
