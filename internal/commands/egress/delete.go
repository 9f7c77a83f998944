package egress

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type deleteOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Targets   []string
	Format    string
}

func newCmdDelete(f *cmdutil.Factory, runF func(context.Context, *deleteOptions) error) *cobra.Command {
	opts := &deleteOptions{f: f}
	cmd := &cobra.Command{
		Use:   "delete SANDBOX_ID --target TARGET...",
		Short: "Remove egress rules by target.",
		Long: "Remove the rules for the given targets from a sandbox's egress policy. Targets\n" +
			"without a rule are ignored, so running the same delete twice is harmless. The\n" +
			"default action is kept.",
		Example:           "  osb egress delete sbx-123 --target pypi.org --target '*.example.com'",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			for i, t := range opts.Targets {
				if opts.Targets[i] = strings.TrimSpace(t); opts.Targets[i] == "" {
					return cmdutil.UsageErrorf("--target cannot be blank.")
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDelete(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Targets, "target", nil, "Target whose rule to remove, e.g. pypi.org (required, repeatable).")
	_ = cmd.MarkFlagRequired("target")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runDelete(ctx context.Context, opts *deleteOptions) error {
	eg, err := opts.f.Egress(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	st, err := eg.DeleteRules(ctx, opts.Targets)
	if err != nil {
		return err
	}
	p := opts.f.Printer(opts.Format)
	warnNotEnforced(p, st)
	return p.Panel("Egress Rules Deleted", output.Obj{
		{Key: "sandbox_id", Value: eg.SandboxID()},
		{Key: "targets", Value: opts.Targets},
	})
}
