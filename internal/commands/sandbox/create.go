package sandbox

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type createOptions struct {
	cmdutil.Base

	Image             string
	AuthUsername      string
	AuthPassword      string
	Template          string
	SnapshotID        string
	File              string
	Timeout           string
	TimeoutSet        bool
	Env               cmdutil.Pairs
	Metadata          cmdutil.Pairs
	Extensions        cmdutil.Pairs
	Resources         cmdutil.Pairs
	Entrypoint        []string
	NetworkPolicyFile string
	CredentialProxy   bool
	VolumesFile       string
	SkipHealthCheck   bool
	ReadyTimeout      cmdutil.DurationValue
}

// Defaults the official SDK applies to every create.
const (
	defaultTimeout      = 600 * time.Second
	defaultReadyTimeout = 30 * time.Second
)

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	opts := &createOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[createOptions]{
		Name:  "create",
		Short: "Create a sandbox from an image, a template, a snapshot or a request file.",
		Long: "Create a sandbox and wait until it runs and its execd answers (unless\n" +
			"--skip-health-check). If it does not become ready in time, or anything fails\n" +
			"once the server has given it an id, the sandbox is deleted again.\n\n" +
			"Without --timeout the config's defaults.timeout applies, else the SDK default\n" +
			"of 10 minutes; '--timeout none' keeps the sandbox until it is killed.",
		Example: "  osb sandbox create -i python:3.11 -t 30m -e DEBUG=1 -m team=ml\n" +
			"  osb sandbox create --template tpl_abc -t 1h\n" +
			"  id=$(osb sandbox create -f request.json -q id)",
		Formats: cmdutil.TableFormats,
		Prints:  createdView{},
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Image, "image", "i", "", "Container image, e.g. python:3.11 (default: defaults.image from the config).")
			fs.StringVar(&opts.AuthUsername, "image-auth-username", "", "Registry username for a private image (with --image-auth-password).")
			fs.StringVar(&opts.AuthPassword, "image-auth-password", "", "Registry password for a private image (with --image-auth-username).")
			fs.StringVar(&opts.Template, "template", "", "Create from this template id (tpl_...); needs --timeout.")
			fs.StringVar(&opts.SnapshotID, "snapshot-id", "", "Restore from this snapshot id.")
			fs.StringVarP(&opts.File, "file", "f", "", "CreateSandboxRequest JSON file (camelCase wire format) instead of request flags.")
			fs.StringVarP(&opts.Timeout, "timeout", "t", "", "Lifetime, e.g. 30m or 1h30m, or 'none' to keep it until killed.")
			fs.Given("timeout", &opts.TimeoutSet)
			fs.Pairs(&opts.Env, "env", "e", "Environment variable KEY=VALUE (repeatable).")
			fs.Pairs(&opts.Metadata, "metadata", "m", "Metadata label KEY=VALUE (repeatable).")
			fs.Pairs(&opts.Extensions, "extension", "", "Server extension KEY=VALUE, passed through as is (repeatable).")
			fs.Pairs(&opts.Resources, "resource", "", "Resource limit KEY=VALUE, e.g. cpu=1 memory=2Gi (repeatable; default cpu=1 memory=2Gi).")
			fs.StringArrayVar(&opts.Entrypoint, "entrypoint", nil, "One argv item of the entrypoint (repeatable; default tail -f /dev/null).")
			fs.StringVar(&opts.NetworkPolicyFile, "network-policy-file", "", "JSON NetworkPolicy file (defaultAction, egress rules).")
			fs.BoolVar(&opts.CredentialProxy, "credential-proxy", false, "Enable Credential Vault injection (needs --network-policy-file).")
			fs.StringVar(&opts.VolumesFile, "volumes-file", "", "JSON file holding an array of Volume objects.")
			fs.BoolVar(&opts.SkipHealthCheck, "skip-health-check", false, "Return as soon as the server accepts the sandbox.")
			fs.Timeout(&opts.ReadyTimeout, "ready-timeout", "", "How long to wait for readiness (default 30s; not 0: --skip-health-check does not wait).")
		},
		Run: runCreate,
	})
}

func runCreate(ctx context.Context, opts *createOptions) error {
	plan, err := opts.plan()
	if err != nil {
		return err
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	ready := ops.Readiness{Timeout: readyTimeout(opts.ReadyTimeout), Skip: opts.SkipHealthCheck}
	sb, err := ops.Create(ctx, c, plan.Body, ready, nil)
	if err != nil {
		return err
	}
	v := plan.Source
	v.ID, v.Status, v.Timeout, v.RequestFile = sb.ID, "created", plan.TimeoutText, opts.File
	return opts.Printer().Panel("Sandbox Created", v)
}
