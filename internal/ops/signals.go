package ops

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Signaled is the cause of a context cancelled by a signal: Ctrl-C
// (SIGINT), SIGTERM, or SIGHUP when the terminal osb runs in is closed.
type Signaled struct{ Signal os.Signal }

func (s Signaled) Error() string { return "got " + s.Signal.String() }

// NotifySignals returns a context cancelled, with Signaled as its cause,
// when osb gets SIGINT, SIGTERM or SIGHUP. Each of them means "stop": a
// foreground command stops the remote command first. Later signals are
// still caught until stop is called, so a second one does not kill osb
// half way through (a command run counts Ctrl-C presses itself).
func NotifySignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	// Catching a signal the parent set to be ignored would undo that:
	// under nohup SIGHUP must stay ignored, and so must SIGINT for a job
	// a script started in the background.
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancel(Signaled{sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// InterruptedCode is the exit code of a run that ctx's cancellation
// ended: 128 plus the signal's number, as a shell reports a command a
// signal ended (129 SIGHUP, 143 SIGTERM), and 130, as for Ctrl-C, when no
// signal is known.
func InterruptedCode(ctx context.Context) int {
	var s Signaled
	if errors.As(context.Cause(ctx), &s) {
		if n, ok := s.Signal.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return ExitInterrupted
}
