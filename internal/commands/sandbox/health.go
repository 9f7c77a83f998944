package sandbox

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type healthOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
}

func newCmdHealth(f *cmdutil.Factory) *cobra.Command {
	opts := &healthOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[healthOptions]{
		Name:  "health",
		Short: "Check whether a sandbox's execd answers.",
		Long: "Ping the sandbox's execd. The answer is the output, not the exit code: an\n" +
			"unhealthy sandbox still exits 0 (read \"healthy\" under -o json). A sandbox\n" +
			"that does not exist, or a server that cannot be reached, is an error.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Run:     runHealth,
	})
}

func runHealth(ctx context.Context, opts *healthOptions) error {
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
