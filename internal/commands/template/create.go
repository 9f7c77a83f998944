package template

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type createOptions struct {
	f *cmdutil.Factory

	Image         string
	Publish       string
	File          string
	Resources     cmdutil.Pairs
	Entrypoint    []string
	Env           cmdutil.Pairs
	Metadata      cmdutil.Pairs
	ImageFormat   string
	Probe         string
	WarmupSeconds int
	Format        string

	// Which flags were given: an empty --image still conflicts with --file.
	ImageSet, PublishSet, ImageFormatSet, ProbeSet, WarmupSet bool
}

var imageFormats = []string{"native", "overlaybd"}

func newCmdCreate(f *cmdutil.Factory, runF func(context.Context, *createOptions) error) *cobra.Command {
	opts := &createOptions{f: f}
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a template; the server then builds it asynchronously.",
		Long: "Create a template from flags, or from a CreateTemplateRequest JSON file (-f).\n" +
			"The template starts Pending; 'osb template get' shows when it is Succeeded\n" +
			"(usable by 'osb sandbox create --template') or Failed, and why.",
		Example: "  osb template create -i python:3.11 -p s3://bucket/publish --resource cpu=1 --resource memory=512Mi\n" +
			"  osb template create -f template.json -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			opts.ImageSet, opts.PublishSet = fl.Changed("image"), fl.Changed("publish")
			opts.ImageFormatSet, opts.ProbeSet, opts.WarmupSet = fl.Changed("format"), fl.Changed("readiness-probe"), fl.Changed("warmup-seconds")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCreate(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Image, "image", "i", "", "Source image the template is built from (required unless --file).")
	fl.StringVarP(&opts.Publish, "publish", "p", "", "S3-compatible publish target for the build, e.g. s3://bucket/publish (required unless --file).")
	fl.StringVarP(&opts.File, "file", "f", "", "CreateTemplateRequest JSON file (camelCase wire keys) instead of the request flags.")
	cmdutil.PairsFlag(fl, &opts.Resources, "resource", "", "Resource limit KEY=VALUE, e.g. cpu=1 memory=512Mi disk=2Gi (repeatable).")
	fl.StringArrayVar(&opts.Entrypoint, "entrypoint", nil, "One argv item of the entrypoint (repeatable).")
	cmdutil.PairsFlag(fl, &opts.Env, "env", "e", "Environment variable KEY=VALUE baked into the template (repeatable).")
	cmdutil.PairsFlag(fl, &opts.Metadata, "metadata", "m", "Metadata label KEY=VALUE (repeatable).")
	cmdutil.EnumFlag(cmd, &opts.ImageFormat, "format", "", "", imageFormats, "Storage format of the build: native or overlaybd (server default overlaybd).")
	fl.StringVar(&opts.Probe, "readiness-probe", "", "Build readiness probe, e.g. tcp://127.0.0.1:44772 or cmd://<command>.")
	fl.IntVar(&opts.WarmupSeconds, "warmup-seconds", 0, "Warm-up seconds used when no probe is set (0 or more).")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runCreate(ctx context.Context, opts *createOptions) error {
	req, err := opts.request()
	if err != nil {
		return err
	}
	c, err := opts.f.Client()
	if err != nil {
		return err
	}
	t, err := c.CreateTemplate(ctx, req)
	if err != nil {
		return err
	}
	panel := output.Obj{
		{Key: "template_id", Value: t.TemplateID},
		{Key: "image", Value: t.Image},
		{Key: "status", Value: t.Status.Phase},
	}
	if opts.File != "" {
		panel = append(panel, output.KV{Key: "request_file", Value: opts.File})
	}
	return opts.f.Printer(opts.Format).Panel("Template Created", panel)
}

// request validates the flags, or the request file, in the official
// client's order; nothing is sent before it succeeds.
func (o *createOptions) request() (*client.CreateTemplateRequest, error) {
	if o.WarmupSet && o.WarmupSeconds < 0 {
		return nil, cmdutil.UsageErrorf("--warmup-seconds must be 0 or more, got %d", o.WarmupSeconds)
	}
	if o.File != "" {
		if given := o.requestFlagsGiven(); len(given) > 0 {
			return nil, cmdutil.UsageErrorf("--file cannot be combined with: %s.", strings.Join(given, ", "))
		}
		req, ignored, err := requestFromFile(o.File)
		if err != nil {
			return nil, err
		}
		if len(ignored) > 0 {
			o.f.Printer(o.Format).Warning("Request file '" + o.File + "': ignoring unknown fields: " + strings.Join(ignored, ", ") + ".")
		}
		return req, nil
	}
	var missing []string
	if strings.TrimSpace(o.Image) == "" {
		missing = append(missing, "--image")
	}
	if strings.TrimSpace(o.Publish) == "" {
		missing = append(missing, "--publish")
	}
	if len(missing) > 0 {
		return nil, cmdutil.UsageErrorf("Missing required options: %s (or pass --file).", strings.Join(missing, ", "))
	}
	req := &client.CreateTemplateRequest{
		Image:          o.Image,
		Publish:        o.Publish,
		ResourceLimits: o.Resources.Map(),
		Entrypoint:     o.Entrypoint,
		Env:            o.Env.Map(),
		Metadata:       o.Metadata.Map(),
		Format:         o.ImageFormat,
	}
	if o.ProbeSet || o.WarmupSet {
		req.Readiness = &client.Readiness{}
		if o.ProbeSet {
			req.Readiness.Probe = &o.Probe
		}
		if o.WarmupSet {
			n := int64(o.WarmupSeconds)
			req.Readiness.WarmupSeconds = &n
		}
	}
	return req, nil
}

// requestFlagsGiven lists the request-building flags given, in the order
// the --file conflict message names them.
func (o *createOptions) requestFlagsGiven() []string {
	var given []string
	add := func(set bool, name string) {
		if set {
			given = append(given, name)
		}
	}
	add(o.ImageSet, "--image")
	add(o.PublishSet, "--publish")
	add(len(o.Resources) > 0, "--resource")
	add(len(o.Entrypoint) > 0, "--entrypoint")
	add(len(o.Env) > 0, "--env")
	add(len(o.Metadata) > 0, "--metadata")
	add(o.ImageFormatSet, "--format")
	add(o.ProbeSet, "--readiness-probe")
	add(o.WarmupSet, "--warmup-seconds")
	return given
}
