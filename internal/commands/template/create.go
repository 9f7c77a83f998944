package template

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type createOptions struct {
	cmdutil.Base

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

	// Which flags were given: an empty --image still conflicts with --file.
	ImageSet, PublishSet, ImageFormatSet, ProbeSet, WarmupSet bool
}

var imageFormats = []string{"native", "overlaybd"}

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	opts := &createOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[createOptions]{
		Name:  "create",
		Short: "Create a template; the server then builds it asynchronously.",
		Long: "Create a template from flags, or from a CreateTemplateRequest JSON file (-f).\n" +
			"The template starts Pending; 'osb template get' shows when it is Succeeded\n" +
			"(usable by 'osb sandbox create --template') or Failed, and why.",
		Example: "  osb template create -i python:3.11 -p s3://bucket/publish --resource cpu=1 --resource memory=512Mi\n" +
			"  osb template create -f template.json -o json",
		Formats: cmdutil.TableFormats,
		Prints:  createdView{},
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Image, "image", "i", "", "Source image the template is built from (required unless --file).")
			fs.Given("image", &opts.ImageSet)
			fs.StringVarP(&opts.Publish, "publish", "p", "", "S3-compatible publish target for the build, e.g. s3://bucket/publish (required unless --file).")
			fs.Given("publish", &opts.PublishSet)
			fs.StringVarP(&opts.File, "file", "f", "", "CreateTemplateRequest JSON file (camelCase wire keys) instead of the request flags.")
			fs.Pairs(&opts.Resources, "resource", "", "Resource limit KEY=VALUE, e.g. cpu=1 memory=512Mi disk=2Gi (repeatable).")
			fs.StringArrayVar(&opts.Entrypoint, "entrypoint", nil, "One argv item of the entrypoint (repeatable).")
			fs.Pairs(&opts.Env, "env", "e", "Environment variable KEY=VALUE baked into the template (repeatable).")
			fs.Pairs(&opts.Metadata, "metadata", "m", "Metadata label KEY=VALUE (repeatable).")
			fs.Enum(&opts.ImageFormat, "format", "", "", imageFormats, "Storage format of the build: native or overlaybd (server default overlaybd).")
			fs.Given("format", &opts.ImageFormatSet)
			fs.StringVar(&opts.Probe, "readiness-probe", "", "Build readiness probe, e.g. tcp://127.0.0.1:44772 or cmd://<command>.")
			fs.Given("readiness-probe", &opts.ProbeSet)
			fs.IntVar(&opts.WarmupSeconds, "warmup-seconds", 0, "Warm-up seconds used when no probe is set (0 or more).")
			fs.Given("warmup-seconds", &opts.WarmupSet)
		},
		Run: runCreate,
	})
}

func runCreate(ctx context.Context, opts *createOptions) error {
	req, err := opts.request()
	if err != nil {
		return err
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	t, err := c.CreateTemplate(ctx, req)
	if err != nil {
		return err
	}
	return opts.Printer().Panel("Template Created", createdView{TemplateID: t.TemplateID, Image: t.Image, Status: t.Status.Phase, RequestFile: opts.File})
}

// request validates the flags, or the request file, in the official
// client's order; nothing is sent before it succeeds.
func (o *createOptions) request() (*client.CreateTemplateRequest, error) {
	if o.WarmupSet && o.WarmupSeconds < 0 {
		return nil, ops.UsageErrorf("--warmup-seconds must be 0 or more, got %d", o.WarmupSeconds)
	}
	if o.File != "" {
		if given := o.requestFlagsGiven(); len(given) > 0 {
			return nil, ops.UsageErrorf("--file cannot be combined with: %s.", strings.Join(given, ", "))
		}
		req, ignored, err := requestFromFile(o.File)
		if err != nil {
			return nil, err
		}
		if len(ignored) > 0 {
			o.Printer().Warning("Request file '" + o.File + "': ignoring unknown fields: " + strings.Join(ignored, ", ") + ".")
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
		return nil, ops.UsageErrorf("Missing required options: %s (or pass --file).", strings.Join(missing, ", "))
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
