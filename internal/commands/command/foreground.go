package command

import (
	"cmp"
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
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// interruptGrace is how long osb waits, once it has asked the server to
// stop the remote command, for the stream to show that it ended.
var interruptGrace = 5 * time.Second

// timeoutMargin is how long after a run's own timeout osb stops it itself,
// should the server not have ended the stream by then.
var timeoutMargin = 5 * time.Second

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

// result is what a foreground run prints under -o json; JSON writes it.
type result struct {
	ExecutionID string       // execution_id
	ExitCode    *int         // as the server reported it: -1 when killed; null when unknown
	Error       *resultError // error
	Duration    float64      // seconds, from the request to the terminal event
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
	ios     *iostreams.IOStreams
	format  string        // raw or json
	filter  output.Filter // --jq or --template, under json
	timeout time.Duration // the run's timeout; 0: none
	// enforce: past timeout (and a margin), osb stops the command itself
	// if the server has not.
	enforce    bool
	session    bool // a session run: stopping it closes the session
	open       func(ctx context.Context) (*client.EventStream, error)
	stop       func(ctx context.Context, id string) error
	interrupts interruptsFunc

	res   result
	lines *lines

	// Where the output goes failed (a closed pipe): the command is
	// stopped, as with Ctrl-C but without a word on the terminal.
	writeErr error

	// A stop in progress: Ctrl-C, a failed output, or the timeout.
	stopping bool             // the command is to be stopped
	timedOut bool             // because its timeout passed
	stopSent bool             // and the server was asked to
	presses  int              // Ctrl-C presses seen on the interrupts channel
	signaled int              // the exit code of a stop a signal asked for (130, 129, 143)
	grace    <-chan time.Time // how long the stop may take
	stopDone chan error       // the stop request's outcome
	stopErr  error
}

// item is what the stream reader hands the run: the events that decide
// how it goes (init, the terminal event), the end of the stream, or the
// failure of the output. Output itself is written by the reader.
type item struct {
	ev       *client.Event
	err      error
	writeErr error
}

// run returns nil when the remote command succeeded, otherwise an error
// carrying the exit code (ops.ExitError).
func (fg *foreground) run(ctx context.Context) error {
	presses, release := fg.interrupts()
	defer release()
	fg.lines = newLines(fg.ios.Out, fg.ios.ErrOut, fg.format == output.JSONF)
	defer fg.lines.close()
	// The stream must survive the first Ctrl-C (which cancels ctx): the
	// terminal event that confirms the stop comes through it.
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	items := make(chan item, 4)
	start := time.Now()
	go fg.read(streamCtx, items)
	fg.stopDone = make(chan error, 1)
	cancelled := ctx.Done()
	var deadline <-chan time.Time
	// A timeout too near the largest duration has no deadline of osb's:
	// adding the margin would wrap around to one in the past.
	if fg.enforce && fg.timeout > 0 && fg.timeout <= math.MaxInt64-timeoutMargin {
		deadline = time.After(fg.timeout + timeoutMargin)
	}
	for {
		select {
		case it := <-items:
			if done, err := fg.handle(streamCtx, it, time.Since(start)); done {
				return err
			}
		case <-cancelled:
			cancelled = nil
			fg.signaled = cmdutil.InterruptedCode(ctx)
			fg.requestStop(streamCtx)
		case <-presses:
			if fg.presses++; fg.presses >= 2 {
				return fg.interrupted(fmt.Sprintf("Interrupted again: not waiting for %s to stop.", fg.target()))
			}
			fg.requestStop(streamCtx)
		case <-deadline:
			deadline = nil
			fg.timedOut = true
			fg.requestStop(streamCtx)
		case fg.stopErr = <-fg.stopDone:
		case <-fg.grace:
			return fg.stopTookTooLong()
		}
	}
}

// handle takes one item from the reader; done reports that the run is over.
func (fg *foreground) handle(ctx context.Context, it item, took time.Duration) (done bool, err error) {
	switch ev := it.ev; {
	case it.writeErr != nil:
		fg.writeErr = it.writeErr
		fg.requestStop(ctx)
	case it.err != nil:
		return true, fg.broken(it.err)
	case ev.Type == client.EventInit:
		fg.res.ExecutionID = ev.Text
		if fg.stopping {
			fg.requestStop(ctx) // Ctrl-C came before the id
		}
	case ev.Terminal():
		return true, fg.finish(ev, took)
	}
	return false, nil
}

// requestStop starts stopping the remote command: once the user asked (or
// its time is up), and as soon as its id is known, the server is asked to
// interrupt it.
func (fg *foreground) requestStop(ctx context.Context) {
	if !fg.stopping {
		fg.stopping, fg.grace = true, time.After(interruptGrace)
		switch {
		case fg.format == output.JSONF || fg.writeErr != nil:
		case fg.timedOut:
			fg.lines.note(fmt.Sprintf("The command has not ended %s after its timeout of %s: stopping it...", timeoutMargin, fg.timeout))
		default:
			fg.lines.note("Stopping the remote command (Ctrl-C again to stop waiting)...")
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

// read opens the stream, writes its output as it comes and passes on the
// events that matter to the run, until the terminal one; then it closes the
// stream, which the server may hold open for a while after.
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
	// Whenever the reader has to wait for the network, what it has
	// written so far goes out.
	stream.BeforeRead(fg.lines.flush)
	reported := false
	for stream.Scan() {
		ev := stream.Event()
		switch {
		case ev.Output():
			fg.lines.write(ev)
		case ev.Type == client.EventInit, ev.Terminal():
			fg.lines.flush()
			if !send(item{ev: ev.Clone()}) || ev.Terminal() {
				return
			}
		}
		if err := fg.lines.failed(); err != nil && !reported {
			reported = true
			if !send(item{writeErr: err}) {
				return
			}
		}
	}
	fg.lines.flush()
	err = stream.Err()
	if err == nil {
		err = io.EOF
	}
	send(item{err: err})
}

// outputFailed ends a run whose output could not be written: like a
// command killed by SIGPIPE (exit 141, nothing said) when its reader went
// away, otherwise with the error.
func (fg *foreground) outputFailed() error {
	if errors.Is(fg.writeErr, syscall.EPIPE) || errors.Is(fg.writeErr, io.ErrClosedPipe) {
		return ops.Silent(exitBrokenPipe)
	}
	return fg.fail(ops.ExitOsbFailed, fmt.Errorf("cannot write the command's output: %w", fg.writeErr))
}

func (fg *foreground) finish(ev *client.Event, took time.Duration) error {
	code, known := ev.ExitCode()
	if known {
		fg.res.ExitCode = &code
	}
	if e := ev.Error; e != nil {
		fg.res.Error = &resultError{Name: e.Name, Value: e.Value, Traceback: append([]string{}, e.Traceback...)}
	}
	fg.res.Duration = math.Round(took.Seconds()*1000) / 1000
	if fg.format == output.JSONF {
		if err := fg.printResult(); err != nil {
			return err
		}
	}
	switch {
	case fg.writeErr != nil:
		return fg.outputFailed()
	case fg.timedOut:
		return fg.fail(ops.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s; osb stopped it, as the server had not", fg.timeout))
	case fg.stopping:
		return fg.interrupted("Interrupted: " + fg.stopped())
	}
	return fg.exitStatus(ev, code, known)
}

// printResult writes the -o json result, the output streamed from where it
// is held rather than copied into the document.
func (fg *foreground) printResult() error {
	fg.lines.close()
	p := output.New(fg.ios, output.JSONF)
	p.Filter = fg.filter
	return writeResult(p, fg.res, output.Streamed(fg.lines.stdout.writeTo), output.Streamed(fg.lines.stderr.writeTo))
}

// writeResult writes a foreground run's -o json object.
func writeResult(p *output.Printer, res result, stdout, stderr output.Streamed) error {
	var exitCode, errObj any
	if res.ExitCode != nil {
		exitCode = *res.ExitCode
	}
	if res.Error != nil {
		errObj = res.Error
	}
	return p.Document(output.Obj{
		{Key: "execution_id", Value: res.ExecutionID},
		{Key: "exit_code", Value: exitCode},
		{Key: "stdout", Value: stdout},
		{Key: "stderr", Value: stderr},
		{Key: "error", Value: errObj},
		{Key: "duration", Value: res.Duration},
	})
}

// held streams text already in memory.
func held(text []byte) output.Streamed {
	return func(w io.Writer) error {
		_, err := w.Write(text)
		return err
	}
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
			return fg.fail(ops.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s and was stopped (%s)", fg.timeout, e.Value))
		}
		return fg.fail(ops.ExitOsbFailed, fmt.Errorf("the server failed the command: %s: %s", e.Name, e.Value))
	case !known && e.Value == "":
		return fg.fail(ops.ExitOsbFailed, errors.New(noDetails))
	case !known:
		return fg.fail(ops.ExitOsbFailed, fmt.Errorf("the command could not start: %s", e.Value))
	case code == -1:
		// A timeout kills with SIGKILL; another signal is someone else's doing.
		sig := signalNumber(e.Traceback)
		if fg.timeout > 0 && (sig == 0 || sig == int(syscall.SIGKILL)) {
			return fg.fail(ops.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s and was killed", fg.timeout))
		}
		how := strings.Join(e.Traceback, "; ")
		if sig > 0 {
			return fg.fail(128+sig, fmt.Errorf("the command was killed (%s)", how))
		}
		return fg.fail(ops.ExitOsbFailed, fmt.Errorf("the command was killed (%s)", how))
	case code < 0 || code > 255:
		return fg.fail(ops.ExitOsbFailed, fmt.Errorf("the server reported exit code %d", code))
	}
	return ops.Silent(code)
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
	switch {
	case fg.writeErr != nil:
		return fg.outputFailed()
	case fg.timedOut:
		return fg.fail(ops.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s; osb stopped it, as the server had not", fg.timeout))
	case fg.stopping:
		return fg.interrupted("Interrupted: " + fg.stopped())
	case errors.Is(err, io.EOF):
		err = fmt.Errorf("the server closed the stream before %s finished", fg.target())
	}
	return fg.fail(ops.ExitOsbFailed, err)
}

// stopTookTooLong ends a run whose stop did not show in the stream within
// the grace period.
func (fg *foreground) stopTookTooLong() error {
	if fg.writeErr != nil {
		return fg.outputFailed()
	}
	why := ""
	if fg.stopErr != nil {
		why = ": " + fg.stopErr.Error()
	}
	if fg.timedOut {
		return fg.fail(ops.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s, and osb could not confirm it stopped within %s%s; it may still be running", fg.timeout, interruptGrace, why))
	}
	return fg.interrupted(fmt.Sprintf("Interrupted: %s did not stop within %s%s.", fg.target(), interruptGrace, why))
}

func (fg *foreground) fail(code int, err error) error {
	return &ops.ExitError{Code: code, Err: err}
}

// interrupted ends the run with 130: a plain line on stderr, or under -o
// json the usual error object. A stop that SIGHUP or SIGTERM asked for
// exits 129 or 143 instead, as a shell reports those signals.
func (fg *foreground) interrupted(msg string) error {
	code := cmp.Or(fg.signaled, ops.ExitInterrupted)
	if fg.format == output.JSONF {
		return fg.fail(code, errors.New(msg))
	}
	fg.lines.close()
	fg.lines.note(msg)
	return ops.Silent(code)
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
