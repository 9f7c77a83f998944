package ops

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/osb-dev/osb/internal/client"
)

// ErrKernelDidNotStop: the run was interrupted and the kernel did not end
// it within the grace.
var ErrKernelDidNotStop = errors.New("interrupted: the kernel did not stop")

// CodeRun follows one run of code on a sandbox's kernel, for `osb code
// run` and MCP's code_run alike.
type CodeRun struct {
	// Event takes each event, copied out of the stream; true ends the run
	// (a terminal event ends it anyway).
	Event func(*client.Event) (done bool)
	// Interrupting, when set, is told that cancelling ctx interrupted the
	// kernel.
	Interrupting func()
	// Grace is how long an interrupted run may take to end.
	Grace time.Duration
}

// Run runs req and returns the event that ended it. Cancelling ctx
// interrupts the kernel; the stream stays open for its answer (the end of
// the run, usually a KeyboardInterrupt error) for up to Grace.
func (c CodeRun) Run(ctx context.Context, dp *client.DataPlane, req *client.RunCodeRequest) (*client.Event, error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stream, err := dp.RunCode(streamCtx, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	events := make(chan *client.Event, 16)
	go func() {
		defer close(events)
		for stream.Scan() {
			select {
			case events <- stream.Event().Clone():
			case <-streamCtx.Done():
				return
			}
		}
	}()
	id := req.Context.ID
	var grace <-chan time.Time
	cancelled := ctx.Done()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, cmp.Or(stream.Err(), errors.New("the server closed the stream before the run ended"))
			}
			if ev.Type == client.EventInit {
				id = ev.Text
			}
			if c.Event(ev) || ev.Terminal() {
				return ev, nil
			}
		case <-cancelled:
			cancelled, grace = nil, time.After(c.Grace)
			if id != "" {
				go dp.InterruptCode(streamCtx, id)
			}
			if c.Interrupting != nil {
				c.Interrupting()
			}
		case <-grace:
			return nil, ErrKernelDidNotStop
		}
	}
}
