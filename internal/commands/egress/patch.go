package egress

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type patchOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Rules     []client.NetworkRule
	Format    string
}

func newCmdPatch(f *cmdutil.Factory, runF func(context.Context, *patchOptions) error) *cobra.Command {
	opts := &patchOptions{f: f}
	var raw []string
	cmd := &cobra.Command{
		Use:   "patch SANDBOX_ID --rule ACTION=TARGET...",
		Short: "Patch runtime egress rules with merge semantics.",
		Long: "Merge rules into a sandbox's egress policy: each rule replaces the current rule\n" +
			"for its target and takes priority over the others; rules for other targets stay;\n" +
			"the default action is kept. If one target is given twice, the first rule wins.\n" +
			"ACTION is allow or deny; TARGET is a domain (pypi.org) or a wildcard over its\n" +
			"subdomains (*.pypi.org). Rules are checked before anything is sent.",
		Example:           "  osb egress patch sbx-123 --rule allow=pypi.org --rule deny=*.example.com",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			rules, err := parseRules(raw)
			if err != nil {
				return err
			}
			opts.Rules = rules
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPatch(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&raw, "rule", nil, "Rule in ACTION=TARGET form, e.g. allow=pypi.org (required, repeatable).")
	_ = cmd.MarkFlagRequired("rule")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

// parseRules reads every --rule before any request: split at the first
// '=', action trimmed and lower-cased, target trimmed.
func parseRules(raw []string) ([]client.NetworkRule, error) {
	rules := make([]client.NetworkRule, 0, len(raw))
	for _, r := range raw {
		action, target, ok := strings.Cut(r, "=")
		if !ok {
			return nil, cmdutil.UsageErrorf("Invalid rule '%s'. Use ACTION=TARGET, for example allow=pypi.org.", r)
		}
		action = strings.ToLower(strings.TrimSpace(action))
		target = strings.TrimSpace(target)
		if action != "allow" && action != "deny" {
			return nil, cmdutil.UsageErrorf("Invalid rule action '%s'. Use allow or deny.", action)
		}
		if target == "" {
			return nil, cmdutil.UsageErrorf("Invalid rule '%s'. The target cannot be blank; use ACTION=TARGET, for example allow=pypi.org.", r)
		}
		rules = append(rules, client.NetworkRule{Action: action, Target: target})
	}
	return rules, nil
}

func runPatch(ctx context.Context, opts *patchOptions) error {
	eg, err := opts.f.Egress(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	st, err := eg.PatchRules(ctx, opts.Rules)
	if err != nil {
		return err
	}
	p := opts.f.Printer(opts.Format)
	warnNotEnforced(p, st)
	return p.Panel("Egress Policy Patched", output.Obj{
		{Key: "sandbox_id", Value: eg.SandboxID()},
		{Key: "patched_rules", Value: opts.Rules},
	})
}
