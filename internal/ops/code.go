package ops

import (
	"context"
	"errors"
	"io"

	"github.com/osb-dev/osb/internal/client"
)

// RunCode runs code on a sandbox's kernel through run (its Open, Stop,
// WaitStopped and Events are set here), for `osb code run` and MCP's
// code_run alike. run.Output takes every event but init (whose id, the
// context's, is the end's ID) and the terminal one (the end's Last).
// Cancelling ctx interrupts the kernel; the stream stays open for its
// answer (the end of the run, usually a KeyboardInterrupt error) for up to
// run.Grace, then the error is ErrStopUnconfirmed.
func RunCode(ctx context.Context, dp *client.DataPlane, req *client.RunCodeRequest, run CommandRun) (*CommandEnd, error) {
	run.Open = func(ctx context.Context) (*client.EventStream, error) { return dp.RunCode(ctx, req) }
	run.Stop, run.WaitStopped, run.Events = dp.InterruptCode, true, true
	end, err := run.Run(ctx)
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed the stream before the run ended")
	}
	return end, err
}
