package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/osb-dev/osb/internal/client"
)

// ReadyPoll is how often readiness is checked, as the official SDK does.
const ReadyPoll = 200 * time.Millisecond

// Readiness is how to wait for a sandbox to be ready.
type Readiness struct {
	Timeout time.Duration
	Poll    time.Duration // ReadyPoll when zero
	Skip    bool          // do not wait
}

// WaitReady polls until the sandbox is Running and its execd answers /ping,
// for at most r.Timeout. Running out of time is exit 5; a Failed or
// Terminated sandbox, or a lifecycle error, ends the wait at once.
func WaitReady(ctx context.Context, c *client.Client, id string, r Readiness) error {
	if r.Skip {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	poll := r.Poll
	if poll <= 0 {
		poll = ReadyPoll
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	reason := "no answer yet"
	for wctx.Err() == nil {
		ready, why, err := readyOnce(wctx, c, id)
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
	return &ExitError{Code: ExitTimeout, Err: fmt.Errorf("sandbox %s was not ready within %s (%s)", id, r.Timeout, reason)}
}

// readyOnce checks readiness once. A sandbox that is not ready yet gives
// false and the reason; an error means it never will be (Failed,
// Terminated, gone) or the lifecycle server refused to say.
func readyOnce(ctx context.Context, c *client.Client, id string) (ready bool, reason string, err error) {
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
	dp, err := c.DataPlane(ctx, id, client.PortExecd)
	if err == nil {
		err = dp.Ping(ctx)
	}
	if err != nil {
		return false, "execd: " + err.Error(), nil
	}
	return true, "", nil
}

// Create makes a sandbox and waits until it is ready; one that never
// becomes ready is deleted, so a failed create leaves nothing running.
// Progress, when set, is told each step (MCP reports them; the command
// line says nothing until the end).
func Create(ctx context.Context, c *client.Client, body *client.CreateSandboxRequest, r Readiness, progress func(string)) (*client.Sandbox, error) {
	say := func(msg string) {
		if progress != nil {
			progress(msg)
		}
	}
	say("creating the sandbox")
	sb, err := c.CreateSandbox(ctx, body)
	if err != nil {
		return nil, err
	}
	say("waiting for sandbox " + sb.ID + " to be ready")
	if err := WaitReady(ctx, c, sb.ID, r); err != nil {
		return nil, discard(ctx, c, sb.ID, err)
	}
	return sb, nil
}

// discard deletes a sandbox that will not be handed over and says so in
// the error. The caller's context may be why we are here (Ctrl-C, a
// cancelled call), so the cleanup has its own deadline: one request's.
func discard(ctx context.Context, c *client.Client, id string, cause error) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.Options().RequestTimeout)
	defer cancel()
	if err := c.DeleteSandbox(dctx, id); err != nil {
		return fmt.Errorf("%w; deleting sandbox %s also failed: %v", cause, id, err)
	}
	return fmt.Errorf("%w; sandbox %s was deleted", cause, id)
}
