package sandbox

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type healthOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Format    string
}

func newCmdHealth(f *cmdutil.Factory, runF func(context.Context, *healthOptions) error) *cobra.Command {
	opts := &healthOptions{f: f}
	cmd := &cobra.Command{
		Use:   "health SANDBOX_ID",
		Short: "Check whether a sandbox's execd answers.",
		Long: "Ping the sandbox's execd. The answer is the output, not the exit code: an\n" +
			"unhealthy sandbox still exits 0 (read \"healthy\" under -o json). A sandbox\n" +
			"that does not exist, or a server that cannot be reached, is an error.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runHealth(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runHealth(ctx context.Context, opts *healthOptions) error {
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	pingErr := dp.Ping(ctx)
	p := opts.f.Printer(opts.Format)
	if p.Structured() {
		return p.Data(output.Obj{{Key: "sandbox_id", Value: dp.SandboxID}, {Key: "healthy", Value: pingErr == nil}})
	}
	if pingErr == nil {
		return p.Success(fmt.Sprintf("Sandbox %s is healthy", dp.SandboxID))
	}
	p.Problem(fmt.Sprintf("Sandbox %s is unhealthy: %v", dp.SandboxID, pingErr))
	return nil
}
