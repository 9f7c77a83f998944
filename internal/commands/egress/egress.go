// Package egress implements the `osb egress` commands: read and change a
// sandbox's runtime egress policy, through its egress sidecar or, for a
// sandbox made from a template, through the lifecycle server.
package egress

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// NewCmdEgress returns the `egress` group.
func NewCmdEgress(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("egress", "Manage runtime egress policy for a sandbox.")
	cmd.AddCommand(
		egressVerb(f, cmdutil.Verb[egressOptions]{
			Name:  "get",
			Short: "Show the current egress policy.",
			Long: "Show the egress policy of a sandbox: the default action and the rules, in the\n" +
				"order they are tried. SANDBOX_ID may be any unique prefix of the id.",
			Example: "  osb egress get sbx-123 -o json",
			Run:     runGet,
		}, "", ""),
		egressVerb(f, cmdutil.Verb[egressOptions]{
			Name:    "patch",
			UseTail: "--rule ACTION=TARGET...",
			Short:   "Patch runtime egress rules with merge semantics.",
			Long: "Merge rules into a sandbox's egress policy: each rule replaces the current rule\n" +
				"for its target and takes priority over the others; rules for other targets stay;\n" +
				"the default action is kept. If one target is given twice, the first rule wins.\n" +
				"ACTION is allow or deny; TARGET is a domain (pypi.org) or a wildcard over its\n" +
				"subdomains (*.pypi.org). Rules are checked before anything is sent.",
			Example: "  osb egress patch sbx-123 --rule allow=pypi.org --rule deny=*.example.com",
			Run:     runPatch,
		}, "rule", "Rule in ACTION=TARGET form, e.g. allow=pypi.org (required, repeatable)."),
		egressVerb(f, cmdutil.Verb[egressOptions]{
			Name:    "delete",
			UseTail: "--target TARGET...",
			Short:   "Remove egress rules by target.",
			Long: "Remove the rules for the given targets from a sandbox's egress policy. Targets\n" +
				"without a rule are ignored, so running the same delete twice is harmless. The\n" +
				"default action is kept.",
			Example: "  osb egress delete sbx-123 --target pypi.org --target '*.example.com'",
			Run:     runDelete,
		}, "target", "Target whose rule to remove, e.g. pypi.org (required, repeatable)."),
	)
	return cmd
}

type egressOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Values  []string // patch's rules, delete's targets
}

// egressVerb declares a verb on one sandbox's policy; patch and delete take
// their values from flag, required and repeatable.
func egressVerb(f *cmdutil.Factory, verb cmdutil.Verb[egressOptions], flag, help string) *cobra.Command {
	opts := &egressOptions{}
	verb.Args = []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)}
	verb.Formats = cmdutil.TableFormats
	if flag != "" {
		verb.Flags = func(fs *cmdutil.FlagSet) {
			fs.StringArrayVar(&opts.Values, flag, nil, help)
			fs.Required(flag)
		}
	}
	return cmdutil.NewVerb(f, opts, verb)
}

// policyView is the policy as the official client prints it: snake_case.
type policyView struct {
	DefaultAction *string              `json:"default_action"`
	Egress        []client.NetworkRule `json:"egress"`
}

func runGet(ctx context.Context, opts *egressOptions) error {
	eg, err := opts.Sandbox.Egress(ctx)
	if err != nil {
		return err
	}
	st, err := eg.GetPolicy(ctx)
	if err != nil {
		return err
	}
	if st.Policy == nil {
		return errors.New("the server's policy response has no policy")
	}
	p := opts.Printer()
	warnNotEnforced(p, st)
	return p.Object("Egress Policy", policyView{DefaultAction: st.Policy.DefaultAction, Egress: st.Policy.Egress})
}

// patchedView is what patch prints.
type patchedView struct {
	SandboxID    string               `json:"sandbox_id"`
	PatchedRules []client.NetworkRule `json:"patched_rules"`
}

func runPatch(ctx context.Context, opts *egressOptions) error {
	rules, err := parseRules(opts.Values)
	if err != nil {
		return err
	}
	return change(ctx, opts, "Egress Policy Patched", func(eg *client.Egress) (*client.PolicyStatus, any, error) {
		st, err := eg.PatchRules(ctx, rules)
		return st, patchedView{SandboxID: eg.SandboxID(), PatchedRules: rules}, err
	})
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

// deletedView is what delete prints.
type deletedView struct {
	SandboxID string   `json:"sandbox_id"`
	Targets   []string `json:"targets"`
}

func runDelete(ctx context.Context, opts *egressOptions) error {
	targets := opts.Values
	for i, t := range targets {
		if targets[i] = strings.TrimSpace(t); targets[i] == "" {
			return ops.UsageErrorf("--target cannot be blank.")
		}
	}
	return change(ctx, opts, "Egress Rules Deleted", func(eg *client.Egress) (*client.PolicyStatus, any, error) {
		st, err := eg.DeleteRules(ctx, targets)
		return st, deletedView{SandboxID: eg.SandboxID(), Targets: targets}, err
	})
}

// change sends one change of the policy and shows the view send gives
// under title.
func change(ctx context.Context, opts *egressOptions, title string, send func(*client.Egress) (*client.PolicyStatus, any, error)) error {
	eg, err := opts.Sandbox.Egress(ctx)
	if err != nil {
		return err
	}
	st, view, err := send(eg)
	if err != nil {
		return err
	}
	p := opts.Printer()
	warnNotEnforced(p, st)
	return p.Panel(title, view)
}

// warnNotEnforced tells the user when the server says it stores rules
// without enforcing them (the local osb server does).
func warnNotEnforced(p *output.Printer, st *client.PolicyStatus) {
	if st.EnforcementMode != "none" {
		return
	}
	if st.Reason != "" {
		p.Warning(st.Reason)
	} else {
		p.Warning("this server stores egress rules but does not enforce them")
	}
}
