package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// NotReadyError is a readiness wait that ran out of time; Reason is the
// last thing that kept the sandbox from being ready.
type NotReadyError struct {
	ID     string
	Reason string
	Err    error // the context's error
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("sandbox %s is not ready (%s)", e.ID, e.Reason)
}
func (e *NotReadyError) Unwrap() error { return e.Err }

// WaitReady polls every poll until the sandbox is Running and its execd
// answers /ping. A Failed or Terminated sandbox, or a lifecycle error, ends
// the wait at once with an error; when ctx ends first the error is a
// *NotReadyError.
func (c *Client) WaitReady(ctx context.Context, id string, poll time.Duration) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	reason := "no answer yet"
	for ctx.Err() == nil {
		ready, why, err := c.readyOnce(ctx, id)
		switch {
		case ready:
			return nil
		case err != nil && ctx.Err() == nil:
			return err
		case err == nil:
			reason = why
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	return &NotReadyError{ID: id, Reason: reason, Err: ctx.Err()}
}

// readyOnce checks readiness once. A sandbox that is not ready yet gives
// false and the reason; an error means it never will be (Failed,
// Terminated, gone) or the lifecycle server refused to say.
func (c *Client) readyOnce(ctx context.Context, id string) (ready bool, reason string, err error) {
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
	dp, err := c.DataPlane(ctx, id, PortExecd)
	if err == nil {
		err = dp.Ping(ctx)
	}
	if err != nil {
		return false, "execd: " + err.Error(), nil
	}
	return true, "", nil
}
