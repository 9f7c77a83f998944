package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

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
		Use:               "get SANDBOX_ID",
		Short:             "Get sanitized Credential Vault state.",
		Long:              "Show the Credential Vault's revision, credentials (names, source types, revisions)\nand bindings (match and auth type). Secret values are never shown.",
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

func runGet(ctx context.Context, opts *getOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	st, err := v.Get(ctx)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Object("Credential Vault", newStateView(st))
}
