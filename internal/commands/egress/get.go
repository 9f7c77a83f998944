package egress

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type getOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
}

func newCmdGet(f *cmdutil.Factory) *cobra.Command {
	opts := &getOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[getOptions]{
		Name:  "get",
		Short: "Show the current egress policy.",
		Long: "Show the egress policy of a sandbox: the default action and the rules, in the\n" +
			"order they are tried. SANDBOX_ID may be any unique prefix of the id.",
		Example: "  osb egress get sbx-123 -o json",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Run:     runGet,
	})
}

// policyView is the policy as the official client prints it: snake_case.
type policyView struct {
	DefaultAction *string              `json:"default_action"`
	Egress        []client.NetworkRule `json:"egress"`
}

func runGet(ctx context.Context, opts *getOptions) error {
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
