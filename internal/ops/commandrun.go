package ops

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/osb-dev/osb/internal/client"
)

var (
	// ErrStopUnconfirmed: the stream did not show the end of a stopped
	// command within the grace.
	ErrStopUnconfirmed = errors.New("the stop was not confirmed in time")
	// ErrNotWaiting: Ctrl-C was pressed again while the command stopped.
	ErrNotWaiting = errors.New("interrupted again: not waiting for the stop")
)

// CommandOutput takes a command's output as the stream brings it (with
// Events, the other events too), on the goroutine that reads the stream
// (so that a slow writer never holds up the run's answer to Ctrl-C or its
// timeout).
type CommandOutput interface {
	// Write takes one event, valid only for the call unless the run reads
	// Whole events.
	Write(*client.Event)
	// Flush: the reader is about to wait for the network, or to hand an
	// event on to the run.
	Flush()
	// Failed is non-nil once the output can no longer be written: the
	// command is then stopped.
	Failed() error
}

// StopCause is why osb stopped a command.
type StopCause int

const (
	StopAsked        StopCause = iota + 1 // cancelled, or Ctrl-C
	StopTimedOut                          // StopAfter passed
	StopOutputFailed                      // Output.Failed
)

// CommandRun follows one execution stream (a command, a session run, a
// code run) to its terminal event, for every command and code verb and
// MCP's command_run and code_run. Its fields other than Open are optional.
type CommandRun struct {
	Open   func(context.Context) (*client.EventStream, error)
	Output CommandOutput // nil: the output is dropped
	// Whole reads a long line as one event (one message per line).
	Whole bool
	// Events: Output takes every event but init and the terminal one (a
	// code run's results and count), not only output.
	Events bool
	// Stop asks the server to stop the command; nil: never stopped.
	Stop func(ctx context.Context, id string) error
	// Grace bounds a stop: its request, and with WaitStopped how long the
	// stream may take to show the command ended.
	Grace time.Duration
	// WaitStopped: a stop keeps the stream open for the terminal event
	// that confirms it, rather than returning ctx's error at once.
	WaitStopped bool
	// Presses are Ctrl-C presses: the first stops the command, the second
	// ends the run with ErrNotWaiting.
	Presses <-chan os.Signal
	// StopAfter: osb stops the command itself once this has passed; 0:
	// never.
	StopAfter time.Duration
	// Stopping is told, once, that a stop began and why.
	Stopping func(StopCause)
	// Tick, when set, is called every TickEvery while the command runs.
	Tick      func()
	TickEvery time.Duration
}

// CommandEnd is how a command run ended.
type CommandEnd struct {
	ID        string        // the execution id; "": it never arrived
	Last      *client.Event // the terminal event; nil: none came
	Took      time.Duration // from the request to the terminal event
	Stopped   bool          // osb stopped the command
	TimedOut  bool          // because StopAfter passed
	OutputErr error         // because the output failed
	Cancelled bool          // ctx was cancelled
	StopErr   error         // the stop request's own failure
}

type streamItem struct {
	ev       *client.Event
	err      error
	writeErr error
}

// Run returns the end of the run, with an error when the stream failed or
// ended early (io.EOF), when ctx was cancelled (without WaitStopped),
// ErrStopUnconfirmed or ErrNotWaiting.
func (c CommandRun) Run(ctx context.Context) (*CommandEnd, error) {
	if c.Output == nil {
		c.Output = dropOutput{}
	}
	// The stream outlives a cancelled ctx: the terminal event that
	// confirms the stop comes through it.
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	items := make(chan streamItem, 4)
	start := time.Now()
	go c.read(streamCtx, items)
	r := &commandLoop{CommandRun: c, ctx: streamCtx, stopDone: make(chan error, 1)}
	var deadline, tick <-chan time.Time
	if c.StopAfter > 0 {
		t := time.NewTimer(c.StopAfter)
		defer t.Stop()
		deadline = t.C
	}
	if c.Tick != nil {
		t := time.NewTicker(c.TickEvery)
		defer t.Stop()
		tick = t.C
	}
	cancelled, presses, stopDone := ctx.Done(), c.Presses, r.stopDone
	for {
		select {
		case it := <-items:
			if done, err := r.handle(it, time.Since(start)); done {
				return &r.end, err
			}
		case <-cancelled:
			cancelled, r.end.Cancelled = nil, true
			if r.stop(StopAsked); !c.WaitStopped {
				if r.stopSent && stopDone != nil {
					r.end.StopErr = <-stopDone // the answer, within Grace
				}
				return &r.end, ctx.Err()
			}
		case <-presses:
			if r.presses++; r.presses >= 2 {
				return &r.end, ErrNotWaiting
			}
			r.stop(StopAsked)
		case <-deadline:
			r.end.TimedOut = true
			r.stop(StopTimedOut)
		case <-tick:
			c.Tick()
		case r.end.StopErr = <-stopDone:
			stopDone = nil
		case <-r.grace:
			return &r.end, ErrStopUnconfirmed
		}
	}
}

// commandLoop is the state of one run.
type commandLoop struct {
	CommandRun
	ctx      context.Context
	end      CommandEnd
	presses  int
	stopSent bool
	grace    <-chan time.Time
	stopDone chan error
}

// handle takes one item from the reader; done reports that the run is over.
func (r *commandLoop) handle(it streamItem, took time.Duration) (done bool, err error) {
	switch ev := it.ev; {
	case it.writeErr != nil:
		r.end.OutputErr = it.writeErr
		r.stop(StopOutputFailed)
	case it.err != nil:
		return true, it.err
	case ev.Type == client.EventInit:
		r.end.ID = ev.Text
		if r.end.Stopped {
			r.stop(0) // the stop came before the id
		}
	case ev.Terminal():
		r.end.Last, r.end.Took = ev, took
		return true, nil
	}
	return false, nil
}

// stop starts stopping the command: the grace starts at once, and the
// server is asked as soon as the id is known.
func (r *commandLoop) stop(cause StopCause) {
	if r.Stop == nil {
		return
	}
	if !r.end.Stopped {
		r.end.Stopped, r.grace = true, time.After(r.Grace)
		if r.Stopping != nil {
			r.Stopping(cause)
		}
	}
	if id := r.end.ID; id != "" && !r.stopSent {
		r.stopSent = true
		go func() {
			sctx, cancel := context.WithTimeout(r.ctx, r.Grace)
			defer cancel()
			r.stopDone <- r.Stop(sctx, id)
		}()
	}
}

// read opens the stream, writes its output as it comes and hands on the
// events that decide the run (init, the terminal one) until the terminal
// one; then it closes the stream, which the server may hold open a while.
func (c CommandRun) read(ctx context.Context, out chan<- streamItem) {
	send := func(it streamItem) bool {
		select {
		case out <- it:
			return true
		case <-ctx.Done():
			return false
		}
	}
	stream, err := c.Open(ctx)
	if err != nil {
		send(streamItem{err: err})
		return
	}
	defer stream.Close()
	// Whenever the reader has to wait for the network, the output so far
	// goes out.
	stream.BeforeRead(c.Output.Flush)
	next := stream.Next
	if !c.Whole {
		next = func() (*client.Event, error) {
			if stream.Scan() {
				return stream.Event(), nil
			}
			if err := stream.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
	}
	reported := false
	for {
		ev, err := next()
		switch {
		case err != nil:
			c.Output.Flush()
			send(streamItem{err: err})
			return
		case ev.Type == client.EventInit, ev.Terminal():
			c.Output.Flush()
			if !send(streamItem{ev: ev.Clone()}) || ev.Terminal() {
				return
			}
		case ev.Output() || c.Events:
			c.Output.Write(ev)
		}
		if err := c.Output.Failed(); err != nil && !reported {
			reported = true
			if !send(streamItem{writeErr: err}) {
				return
			}
		}
	}
}

// Unbuffered is the Flush and Failed of an output that holds nothing back
// and never fails.
type Unbuffered struct{}

func (Unbuffered) Flush()        {}
func (Unbuffered) Failed() error { return nil }

type dropOutput struct{ Unbuffered }

func (dropOutput) Write(*client.Event) {}
