package sandbox

import (
	"context"
	"fmt"

	"github.com/osb-dev/osb/internal/ops"
)

func runHealth(ctx context.Context, opts *sandboxOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	pingErr := dp.Ping(ctx)
	p := opts.Printer()
	if p.Structured() {
		return p.Data(ops.HealthView{SandboxID: dp.SandboxID, Healthy: pingErr == nil})
	}
	if pingErr == nil {
		return p.Success(fmt.Sprintf("Sandbox %s is healthy", dp.SandboxID))
	}
	p.Problem(fmt.Sprintf("Sandbox %s is unhealthy: %v", dp.SandboxID, pingErr))
	return nil
}
