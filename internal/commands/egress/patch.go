package egress

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type patchOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Rules   []string
}

func newCmdPatch(f *cmdutil.Factory) *cobra.Command {
	opts := &patchOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[patchOptions]{
		Name:    "patch",
		UseTail: "--rule ACTION=TARGET...",
		Short:   "Patch runtime egress rules with merge semantics.",
		Long: "Merge rules into a sandbox's egress policy: each rule replaces the current rule\n" +
			"for its target and takes priority over the others; rules for other targets stay;\n" +
			"the default action is kept. If one target is given twice, the first rule wins.\n" +
			"ACTION is allow or deny; TARGET is a domain (pypi.org) or a wildcard over its\n" +
			"subdomains (*.pypi.org). Rules are checked before anything is sent.",
		Example: "  osb egress patch sbx-123 --rule allow=pypi.org --rule deny=*.example.com",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringArrayVar(&opts.Rules, "rule", nil, "Rule in ACTION=TARGET form, e.g. allow=pypi.org (required, repeatable).")
			fs.Required("rule")
		},
		Run: runPatch,
	})
}

// patchedView is what patch prints.
type patchedView struct {
	SandboxID    string               `json:"sandbox_id"`
	PatchedRules []client.NetworkRule `json:"patched_rules"`
}

// parseRules reads every --rule before any request: split at the first
// '=', action trimmed and lower-cased, target trimmed.
func parseRules(raw []string) ([]client.NetworkRule, error) {
	rules := make([]client.NetworkRule, 0, len(raw))
	for _, r := range raw {
		action, target, ok := strings.Cut(r, "=")
		if !ok {
			return nil, ops.UsageErrorf("Invalid rule '%s'. Use ACTION=TARGET, for example allow=pypi.org.", r)
		}
		action = strings.ToLower(strings.TrimSpace(action))
		target = strings.TrimSpace(target)
		if action != "allow" && action != "deny" {
			return nil, ops.UsageErrorf("Invalid rule action '%s'. Use allow or deny.", action)
		}
		if target == "" {
			return nil, ops.UsageErrorf("Invalid rule '%s'. The target cannot be blank; use ACTION=TARGET, for example allow=pypi.org.", r)
		}
		rules = append(rules, client.NetworkRule{Action: action, Target: target})
	}
	return rules, nil
}

func runPatch(ctx context.Context, opts *patchOptions) error {
	rules, err := parseRules(opts.Rules)
	if err != nil {
		return err
	}
	eg, err := opts.Sandbox.Egress(ctx)
	if err != nil {
		return err
	}
	st, err := eg.PatchRules(ctx, rules)
	if err != nil {
		return err
	}
	p := opts.Printer()
	warnNotEnforced(p, st)
	return p.Panel("Egress Policy Patched", patchedView{SandboxID: eg.SandboxID(), PatchedRules: rules})
}
