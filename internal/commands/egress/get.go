package egress

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type getOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Format    string
}

func newCmdGet(f *cmdutil.Factory, runF func(context.Context, *getOptions) error) *cobra.Command {
	opts := &getOptions{f: f}
	cmd := &cobra.Command{
		Use:   "get SANDBOX_ID",
		Short: "Show the current egress policy.",
		Long: "Show the egress policy of a sandbox: the default action and the rules, in the\n" +
			"order they are tried. SANDBOX_ID may be any unique prefix of the id.",
		Example:           "  osb egress get sbx-123 -o json",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runGet(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

// policyView is the policy as the official client prints it: snake_case.
type policyView struct {
	DefaultAction *string              `json:"default_action"`
	Egress        []client.NetworkRule `json:"egress"`
}

func runGet(ctx context.Context, opts *getOptions) error {
	eg, err := opts.f.Egress(ctx, opts.SandboxID)
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
	p := opts.f.Printer(opts.Format)
	warnNotEnforced(p, st)
	return p.Object("Egress Policy", policyView{DefaultAction: st.Policy.DefaultAction, Egress: st.Policy.Egress})
}
