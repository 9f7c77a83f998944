package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/osb-dev/osb/internal/cmdutil"
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
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	reason := "no answer yet"
	for wctx.Err() == nil {
		ready, why, err := readyOnce(wctx, f, id)
		switch {
		case ready:
			return nil
		case err != nil && wctx.Err() == nil:
			return err
		case err == nil:
			reason = why
		}
		select {
		case <-tick.C:
		case <-wctx.Done():
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &cmdutil.ExitError{Code: cmdutil.ExitTimeout,
		Err: fmt.Errorf("sandbox %s was not ready within %s (%s)", id, timeout, reason)}
}

// readyOnce checks readiness once. A sandbox that is not ready yet gives
// false and the reason; an error means it never will be (Failed,
// Terminated, gone) or the lifecycle server refused to say.
func readyOnce(ctx context.Context, f *cmdutil.Factory, id string) (ready bool, reason string, err error) {
	c, err := f.Client()
	if err != nil {
		return false, "", err
	}
	sb, err := c.GetSandbox(ctx, id)
	if err != nil {
		return false, "", err
	}
	switch sb.Status.State {
	case "Running":
	case "Failed", "Terminated":
		msg := fmt.Sprintf("sandbox %s is %s", id, sb.Status.State)
		if m := sb.Status.Message; m != nil && *m != "" {
			msg += ": " + *m
		}
		return false, "", errors.New(msg)
	default:
		return false, "state " + sb.Status.State, nil
	}
	dp, err := f.Execd(ctx, id)
	if err == nil {
		err = dp.Ping(ctx)
	}
	if err != nil {
		return false, "execd: " + err.Error(), nil
	}
	return true, "", nil
}
