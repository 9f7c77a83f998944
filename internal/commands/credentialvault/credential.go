package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type credentialListOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Format    string
}

func newCmdCredentialList(f *cmdutil.Factory, runF func(context.Context, *credentialListOptions) error) *cobra.Command {
	opts := &credentialListOptions{f: f}
	cmd := &cobra.Command{
		Use:               "list SANDBOX_ID",
		Short:             "List sanitized credential metadata.",
		Long:              "List the credentials of a sandbox's Credential Vault: name, source type and the\nrevision that last set it. Values are never shown.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCredentialList(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runCredentialList(ctx context.Context, opts *credentialListOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	cs, err := v.ListCredentials(ctx)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).List("Credential Vault Credentials",
		[]string{"name", "source_type", "revision"}, credentialViews(cs))
}

type credentialGetOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Name      string
	Format    string
}

func newCmdCredentialGet(f *cmdutil.Factory, runF func(context.Context, *credentialGetOptions) error) *cobra.Command {
	opts := &credentialGetOptions{f: f}
	cmd := &cobra.Command{
		Use:               "get SANDBOX_ID NAME",
		Short:             "Get sanitized metadata for one credential.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Name = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCredentialGet(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runCredentialGet(ctx context.Context, opts *credentialGetOptions) error {
	v, _, err := connect(ctx, opts.f, opts.SandboxID)
	if err != nil {
		return err
	}
	c, err := v.GetCredential(ctx, opts.Name)
	if err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Object("Credential Vault Credential", newCredentialView(*c))
}
