package egress

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type deleteOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Targets []string
}

func newCmdDelete(f *cmdutil.Factory) *cobra.Command {
	opts := &deleteOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[deleteOptions]{
		Name:    "delete",
		UseTail: "--target TARGET...",
		Short:   "Remove egress rules by target.",
		Long: "Remove the rules for the given targets from a sandbox's egress policy. Targets\n" +
			"without a rule are ignored, so running the same delete twice is harmless. The\n" +
			"default action is kept.",
		Example: "  osb egress delete sbx-123 --target pypi.org --target '*.example.com'",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringArrayVar(&opts.Targets, "target", nil, "Target whose rule to remove, e.g. pypi.org (required, repeatable).")
			fs.Required("target")
		},
		Run: runDelete,
	})
}

// deletedView is what delete prints.
type deletedView struct {
	SandboxID string   `json:"sandbox_id"`
	Targets   []string `json:"targets"`
}

func runDelete(ctx context.Context, opts *deleteOptions) error {
	for i, t := range opts.Targets {
		if opts.Targets[i] = strings.TrimSpace(t); opts.Targets[i] == "" {
			return ops.UsageErrorf("--target cannot be blank.")
		}
	}
	eg, err := opts.Sandbox.Egress(ctx)
	if err != nil {
		return err
	}
	st, err := eg.DeleteRules(ctx, opts.Targets)
	if err != nil {
		return err
	}
	p := opts.Printer()
	warnNotEnforced(p, st)
	return p.Panel("Egress Rules Deleted", deletedView{SandboxID: eg.SandboxID(), Targets: opts.Targets})
}
