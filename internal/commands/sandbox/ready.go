package sandbox

import (
	"context"
	"time"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

// readyTimeout is how long to wait for readiness: the flag when given,
// else the SDK's default.
func readyTimeout(flag cmdutil.DurationValue) time.Duration {
	if flag.Set {
		return flag.D
	}
	return defaultReadyTimeout
}

// waitReady waits for the sandbox as ops.WaitReady does.
func waitReady(ctx context.Context, f *cmdutil.Factory, id string, timeout time.Duration) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	return ops.WaitReady(ctx, c, id, ops.Readiness{Timeout: timeout})
}
