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
// to its terminal event (ops.CommandRun), writing output as it arrives, and
// turns the end into an exit code: the remote one, 124 for a timeout, 125
// when osb could not learn it, 130 when interrupted.
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

	res      result
	lines    *lines
	end      *ops.CommandEnd
	signaled int // the exit code of a stop a signal asked for (130, 129, 143)
}

// run returns nil when the remote command succeeded, otherwise an error
// carrying the exit code (ops.ExitError).
func (fg *foreground) run(ctx context.Context) error {
	presses, release := fg.interrupts()
	defer release()
	fg.lines = newLines(fg.ios.Out, fg.ios.ErrOut, fg.format == output.JSONF)
	defer fg.lines.close()
	run := ops.CommandRun{Open: fg.open, Output: fg.lines, Stop: fg.stop, Grace: interruptGrace, WaitStopped: true,
		Presses: presses, Stopping: fg.stopping}
	// A timeout too near the largest duration has no deadline of osb's:
	// adding the margin would wrap around to one in the past.
	if fg.enforce && fg.timeout > 0 && fg.timeout <= math.MaxInt64-timeoutMargin {
		run.StopAfter = fg.timeout + timeoutMargin
	}
	end, err := run.Run(ctx)
	fg.end, fg.res.ExecutionID = end, end.ID
	if end.Cancelled {
		fg.signaled = ops.InterruptedCode(ctx)
	}
	switch {
	case errors.Is(err, ops.ErrNotWaiting):
		return fg.interrupted(fmt.Sprintf("Interrupted again: not waiting for %s to stop.", fg.target()))
	case errors.Is(err, ops.ErrStopUnconfirmed):
		return fg.stopTookTooLong()
	case err != nil:
		return fg.broken(err)
	}
	return fg.finish(end.Last, end.Took)
}

// stopping says on the terminal that the command is being stopped.
func (fg *foreground) stopping(cause ops.StopCause) {
	switch {
	case fg.format == output.JSONF || cause == ops.StopOutputFailed:
	case cause == ops.StopTimedOut:
		fg.lines.note(fmt.Sprintf("The command has not ended %s after its timeout of %s: stopping it...", timeoutMargin, fg.timeout))
	default:
		fg.lines.note("Stopping the remote command (Ctrl-C again to stop waiting)...")
	}
}

// outputFailed ends a run whose output could not be written: like a
// command killed by SIGPIPE (exit 141, nothing said) when its reader went
// away, otherwise with the error.
func (fg *foreground) outputFailed() error {
	if errors.Is(fg.end.OutputErr, syscall.EPIPE) || errors.Is(fg.end.OutputErr, io.ErrClosedPipe) {
		return ops.Silent(exitBrokenPipe)
	}
	return fg.fail(ops.ExitOsbFailed, fmt.Errorf("cannot write the command's output: %w", fg.end.OutputErr))
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
	case fg.end.OutputErr != nil:
		return fg.outputFailed()
	case fg.end.TimedOut:
		return fg.fail(ops.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s; osb stopped it, as the server had not", fg.timeout))
	case fg.end.Stopped:
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
	case fg.end.OutputErr != nil:
		return fg.outputFailed()
	case fg.end.TimedOut:
		return fg.fail(ops.ExitRemoteTimeout, fmt.Errorf("the command did not finish within %s; osb stopped it, as the server had not", fg.timeout))
	case fg.end.Stopped:
		return fg.interrupted("Interrupted: " + fg.stopped())
	case errors.Is(err, io.EOF):
		err = fmt.Errorf("the server closed the stream before %s finished", fg.target())
	}
	return fg.fail(ops.ExitOsbFailed, err)
}

// stopTookTooLong ends a run whose stop did not show in the stream within
// the grace period.
func (fg *foreground) stopTookTooLong() error {
	if fg.end.OutputErr != nil {
		return fg.outputFailed()
	}
	why := ""
	if fg.end.StopErr != nil {
		why = ": " + fg.end.StopErr.Error()
	}
	if fg.end.TimedOut {
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
