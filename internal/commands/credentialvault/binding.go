package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type bindingListOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Format    string
}

func newCmdBindingList(f *cmdutil.Factory, runF func(context.Context, *bindingListOptions) error) *cobra.Command {
	opts := &bindingListOptions{f: f}
	cmd := &cobra.Command{
		Use:               "list SANDBOX_ID",
		Short:             "List sanitized binding metadata.",
		Long:              "List the bindings of a sandbox's Credential Vault: name, revision, the requests\nit matches and its auth type. Credentials are named, never shown.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runBindingList(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runBindingList(ctx context.Context, opts *bindingListOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	bs, err := v.ListBindings(ctx)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).List("Credential Vault Bindings",
		[]string{"name", "revision", "match", "auth"}, bindingViews(bs))
}

type bindingGetOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Name      string
	Format    string
}

func newCmdBindingGet(f *cmdutil.Factory, runF func(context.Context, *bindingGetOptions) error) *cobra.Command {
	opts := &bindingGetOptions{f: f}
	cmd := &cobra.Command{
		Use:               "get SANDBOX_ID NAME",
		Short:             "Get sanitized metadata for one binding.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Name = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runBindingGet(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runBindingGet(ctx context.Context, opts *bindingGetOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	b, err := v.GetBinding(ctx, opts.Name)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Object("Credential Vault Binding", newBindingView(*b))
}
