package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

// readyPoll is how often readiness is checked, as the official SDK does.
const readyPoll = 200 * time.Millisecond

// readyTimeout is how long to wait for readiness: the flag when given,
// else the SDK's default.
func readyTimeout(flag cmdutil.DurationValue) time.Duration {
	if flag.Set {
		return flag.D
	}
	return defaultReadyTimeout
}

// waitReady polls until the sandbox is Running and its execd answers /ping,
// for at most timeout. Running out of time is exit 5; a Failed or
// Terminated sandbox, or a lifecycle error, ends the wait at once.
func waitReady(ctx context.Context, f *cmdutil.Factory, id string, timeout time.Duration) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = c.WaitReady(wctx, id, readyPoll)
	var notReady *client.NotReadyError
	if !errors.As(err, &notReady) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &ops.ExitError{Code: ops.ExitTimeout,
		Err: fmt.Errorf("sandbox %s was not ready within %s (%s)", id, timeout, notReady.Reason)}
}
