// Package credentialvault implements the `osb credential-vault` commands:
// the sandbox-local Credential Vault kept by a sandbox's egress sidecar.
// Secret values go in through payload files or stdin only (never flags),
// travel to the sidecar, and are never printed, logged or echoed in errors.
package credentialvault

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdCredentialVault returns the `credential-vault` group.
func NewCmdCredentialVault(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("credential-vault", "Manage sandbox-local Credential Vault state.")
	credential := cmdutil.NewGroup("credential", "Inspect sanitized Credential Vault credential metadata.")
	credential.AddCommand(
		vaultVerb(f, false, cmdutil.Verb[vaultOptions]{
			Name:  "list",
			Short: "List sanitized credential metadata.",
			Long:  "List the credentials of a sandbox's Credential Vault: name, source type and the\nrevision that last set it. Values are never shown.",
		}, func(ctx context.Context, opts *vaultOptions, v *client.CredentialVault) error {
			cs, err := v.ListCredentials(ctx)
			if err != nil {
				return err
			}
			return opts.Printer().List("Credential Vault Credentials", views(cs, newCredentialView))
		}),
		vaultVerb(f, true, cmdutil.Verb[vaultOptions]{
			Name:  "get",
			Short: "Get sanitized metadata for one credential.",
		}, func(ctx context.Context, opts *vaultOptions, v *client.CredentialVault) error {
			c, err := v.GetCredential(ctx, opts.Name)
			if err != nil {
				return err
			}
			return opts.Printer().Object("Credential Vault Credential", newCredentialView(*c))
		}),
	)
	binding := cmdutil.NewGroup("binding", "Inspect sanitized Credential Vault binding metadata.")
	binding.AddCommand(
		vaultVerb(f, false, cmdutil.Verb[vaultOptions]{
			Name:  "list",
			Short: "List sanitized binding metadata.",
			Long:  "List the bindings of a sandbox's Credential Vault: name, revision, the requests\nit matches and its auth type. Credentials are named, never shown.",
		}, func(ctx context.Context, opts *vaultOptions, v *client.CredentialVault) error {
			bs, err := v.ListBindings(ctx)
			if err != nil {
				return err
			}
			return opts.Printer().List("Credential Vault Bindings", views(bs, newBindingView))
		}),
		vaultVerb(f, true, cmdutil.Verb[vaultOptions]{
			Name:  "get",
			Short: "Get sanitized metadata for one binding.",
		}, func(ctx context.Context, opts *vaultOptions, v *client.CredentialVault) error {
			b, err := v.GetBinding(ctx, opts.Name)
			if err != nil {
				return err
			}
			return opts.Printer().Object("Credential Vault Binding", newBindingView(*b))
		}),
	)
	cmd.AddCommand(
		payloadVerb(f, cmdutil.Verb[vaultOptions]{
			Name:  "create",
			Short: "Create the initial Credential Vault state.",
			Long: "Create a sandbox's Credential Vault from a JSON or YAML payload with two lists:\n" +
				"credentials ({name, source: {type: inline, value}}) and bindings ({name, match,\n" +
				"auth}). --file - reads the payload from stdin. Values are write-only: they are\n" +
				"sent to the sandbox's egress sidecar and never shown again.",
			Example: "  osb credential-vault create sbx-123 --file vault.yaml\n  cat vault.json | osb credential-vault create sbx-123 --file -",
		}, "JSON/YAML payload file, or '-' to read from stdin (required).", createRequest, (*client.CredentialVault).Create),
		vaultVerb(f, false, cmdutil.Verb[vaultOptions]{
			Name:  "get",
			Short: "Get sanitized Credential Vault state.",
			Long:  "Show the Credential Vault's revision, credentials (names, source types, revisions)\nand bindings (match and auth type). Secret values are never shown.",
		}, func(ctx context.Context, opts *vaultOptions, v *client.CredentialVault) error {
			st, err := v.Get(ctx)
			if err != nil {
				return err
			}
			return opts.Printer().Object("Credential Vault", newStateView(st))
		}),
		payloadVerb(f, cmdutil.Verb[vaultOptions]{
			Name:  "patch",
			Short: "Atomically mutate credentials and bindings.",
			Long: "Apply one atomic change to a sandbox's Credential Vault. The JSON or YAML payload\n" +
				"has credentials and/or bindings objects, each with add, replace and delete lists,\n" +
				"and optionally expectedRevision: the change then fails (exit 1) if the vault moved\n" +
				"on since that revision. --file - reads the payload from stdin.",
			Example: "  osb credential-vault patch sbx-123 --file rotate.yaml",
		}, "JSON/YAML mutation payload file, or '-' to read from stdin (required).", patchRequest, (*client.CredentialVault).Patch),
		vaultVerb(f, false, cmdutil.Verb[vaultOptions]{
			Name:  "delete",
			Short: "Delete the sandbox-local Credential Vault.",
			Long:  "Delete a sandbox's Credential Vault with every credential and binding in it.",
		}, func(ctx context.Context, opts *vaultOptions, v *client.CredentialVault) error {
			if err := v.Delete(ctx); err != nil {
				return err
			}
			return opts.Printer().Panel("Credential Vault Deleted", deletedView{SandboxID: opts.SandboxID, Status: "deleted"})
		}),
		credential,
		binding,
	)
	return cmd
}

// vaultOptions is what every credential-vault command has: the sandbox,
// the credential or binding a get command names, and create's or patch's
// payload file.
type vaultOptions struct {
	cmdutil.Base
	Sandbox   cmdutil.Sandbox
	Name      string
	File      string
	SandboxID string // the sandbox's full id, once its vault is reached
}

// args are SANDBOX_ID, then NAME for a get of one credential or binding.
func (o *vaultOptions) args(named bool) []cmdutil.Arg {
	args := []cmdutil.Arg{cmdutil.SandboxArg(&o.Sandbox)}
	if named {
		args = append(args, cmdutil.StringArg("NAME", &o.Name))
	}
	return args
}

// vaultVerb declares a verb that reaches a sandbox's vault and does one
// thing with it.
func vaultVerb(f *cmdutil.Factory, named bool, verb cmdutil.Verb[vaultOptions], do func(context.Context, *vaultOptions, *client.CredentialVault) error) *cobra.Command {
	opts := &vaultOptions{}
	verb.Args = opts.args(named)
	verb.Formats = cmdutil.TableFormats
	verb.Run = func(ctx context.Context, opts *vaultOptions) error {
		v, err := connect(ctx, opts)
		if err != nil {
			return err
		}
		return do(ctx, opts, v)
	}
	return cmdutil.NewVerb(f, opts, verb)
}

// payloadVerb declares create or patch: the payload --file names becomes a
// request with check before any request is sent, then send applies it and
// the vault's new state is shown.
func payloadVerb[T any](f *cmdutil.Factory, verb cmdutil.Verb[vaultOptions], fileHelp string, check func(map[string]any) (T, error), send func(*client.CredentialVault, context.Context, T) (*client.CredentialVaultState, error)) *cobra.Command {
	opts := &vaultOptions{}
	verb.UseTail = "--file PATH"
	verb.Args = opts.args(false)
	verb.Formats = cmdutil.TableFormats
	verb.Flags = func(fs *cmdutil.FlagSet) {
		fs.StringVar(&opts.File, "file", "", fileHelp)
		fs.Required("file")
	}
	verb.Run = func(ctx context.Context, opts *vaultOptions) error {
		req, err := readPayload(opts.Factory, opts.File, check)
		if err != nil {
			return err
		}
		v, err := connect(ctx, opts)
		if err != nil {
			return err
		}
		st, err := send(v, ctx, req)
		if err != nil {
			return err
		}
		return opts.Printer().Object("Credential Vault", newStateView(st))
	}
	return cmdutil.NewVerb(f, opts, verb)
}

// connect reaches the vault of a sandbox (by id or unique prefix); a
// sandbox made from a template has none, which is an error.
func connect(ctx context.Context, opts *vaultOptions) (*client.CredentialVault, error) {
	eg, err := opts.Sandbox.Egress(ctx)
	if err != nil {
		return nil, err
	}
	opts.SandboxID = eg.SandboxID()
	return eg.CredentialVault()
}

// deletedView is what delete prints.
type deletedView struct {
	SandboxID string `json:"sandbox_id"`
	Status    string `json:"status"`
}
