package sandbox

import (
	"strings"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// createPlan is a validated create: the request, and what the result
// panel says about it.
type createPlan struct {
	Body        *client.CreateSandboxRequest
	TimeoutText string      // sdk-default, manual-cleanup or a Python-style duration
	Source      createdView // its template, snapshot_id or image
}

// createdView is what create prints: the sandbox, its lifetime, and what it
// was made from (one of template, snapshot_id, image).
type createdView struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Timeout     string `json:"timeout"`
	RequestFile string `json:"request_file,omitempty"`
	Template    string `json:"template,omitempty"`
	SnapshotID  string `json:"snapshot_id,omitempty"`
	Image       string `json:"image,omitempty"`
}

// The official SDK's defaults for the workload shape.
var (
	defaultResources  = map[string]string{"cpu": "1", "memory": "2Gi"}
	defaultEntrypoint = []string{"tail", "-f", "/dev/null"}
)

// lifetime is a resolved create timeout: the SDK default, manual cleanup
// (Manual), or D.
type lifetime struct {
	Given  bool // a timeout came from the flag, the config or the file
	Manual bool
	D      time.Duration
}

func (l lifetime) seconds() *int64 {
	switch {
	case l.Manual:
		return nil
	case !l.Given:
		n := int64(defaultTimeout / time.Second)
		return &n
	}
	n := int64(l.D / time.Second)
	return &n
}

func (l lifetime) text() string {
	switch {
	case l.Manual:
		return timeoutManualCleanup
	case !l.Given:
		return timeoutSDKDefault
	}
	return pythonDuration(l.D)
}

// checkTemplate applies the template-mode timeout rules.
func (l lifetime) checkTemplate() error {
	switch {
	case !l.Given:
		return ops.UsageErrorf("--timeout is required when creating a sandbox from a template (e.g. --timeout 30m).")
	case l.Manual:
		return ops.UsageErrorf("--timeout none (manual cleanup) is not supported in template mode.")
	}
	return nil
}

// plan validates the flags (or the request file) in the official client's
// order and builds the request. Nothing is sent before it succeeds.
func (o *createOptions) plan() (*createPlan, error) {
	if o.File != "" {
		if given := o.requestFlagsGiven(); len(given) > 0 {
			return nil, ops.UsageErrorf("--file cannot be combined with: %s.", strings.Join(given, ", "))
		}
		return planFromFile(o.File)
	}
	return o.planFromFlags()
}

// requestFlagsGiven lists the flags that shape the request, as the -f
// conflict message names them.
func (o *createOptions) requestFlagsGiven() []string {
	var given []string
	add := func(set bool, name string) {
		if set {
			given = append(given, name)
		}
	}
	add(o.Image != "", "--image")
	add(o.AuthUsername != "" || o.AuthPassword != "", "--image-auth-username/--image-auth-password")
	add(o.Template != "", "--template")
	add(o.SnapshotID != "", "--snapshot-id")
	add(o.TimeoutSet, "--timeout")
	add(len(o.Env) > 0, "--env")
	add(len(o.Metadata) > 0, "--metadata")
	add(len(o.Extensions) > 0, "--extension")
	add(len(o.Resources) > 0, "--resource")
	add(len(o.Entrypoint) > 0, "--entrypoint")
	add(o.NetworkPolicyFile != "", "--network-policy-file")
	add(o.CredentialProxy, "--credential-proxy")
	add(o.VolumesFile != "", "--volumes-file")
	return given
}

// planFromFlags validates the request flags in the official client's order
// and builds the request, with the config's defaults.image and
// defaults.timeout filling in what the flags leave out.
func (o *createOptions) planFromFlags() (*createPlan, error) {
	hasAuth := o.AuthUsername != "" || o.AuthPassword != ""
	if err := o.checkSourceFlags(hasAuth); err != nil {
		return nil, err
	}
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	req := &client.CreateSandboxRequest{
		Env:        o.Env.Map(),
		Metadata:   o.Metadata.Map(),
		Extensions: o.Extensions.Map(),
		Entrypoint: o.Entrypoint,
	}
	source, err := o.setSource(req, cfg.DefaultImage, hasAuth)
	if err != nil {
		return nil, err
	}
	if o.CredentialProxy && o.NetworkPolicyFile == "" {
		return nil, ops.UsageErrorf("--credential-proxy requires --network-policy-file because Credential Vault injection needs egress policy.")
	}
	life, err := o.lifetime(cfg.DefaultTimeout)
	if err != nil {
		return nil, err
	}
	if err := o.readPayloadFiles(req); err != nil {
		return nil, err
	}
	if o.Template != "" {
		if err := life.checkTemplate(); err != nil {
			return nil, err
		}
	} else {
		req.ResourceLimits = o.Resources.Map()
		if req.ResourceLimits == nil {
			req.ResourceLimits = defaultResources
		}
	}
	req.Timeout = life.seconds()
	if o.CredentialProxy {
		req.CredentialProxy = &client.CredentialProxy{Enabled: true}
	}
	return &createPlan{Body: req, TimeoutText: life.text(), Source: source}, nil
}

// checkSourceFlags refuses a template with a snapshot, or with workload
// flags, and a snapshot with an image: the official client's first checks.
func (o *createOptions) checkSourceFlags(hasAuth bool) error {
	if o.Template != "" && o.SnapshotID != "" {
		return ops.UsageErrorf("--template and --snapshot-id are mutually exclusive.")
	}
	if o.Template != "" {
		if bad := o.workloadFlagsGiven(hasAuth); len(bad) > 0 {
			return ops.UsageErrorf("Template mode fixes the workload shape on the server; %s cannot be combined with --template.", strings.Join(bad, ", "))
		}
	}
	if o.SnapshotID != "" {
		if o.Image != "" {
			return ops.UsageErrorf("--snapshot-id and --image are mutually exclusive.")
		}
		if hasAuth {
			return ops.UsageErrorf("--snapshot-id cannot be combined with image auth options.")
		}
	}
	return nil
}

// setSource puts the template, the snapshot or the image (--image, else
// defaults.image) in req, and returns the panel keys that name it.
func (o *createOptions) setSource(req *client.CreateSandboxRequest, defaultImage *string, hasAuth bool) (createdView, error) {
	switch {
	case o.Template != "":
		req.TemplateID = o.Template
		return createdView{Template: o.Template}, nil
	case o.SnapshotID != "":
		req.SnapshotID = o.SnapshotID
		return createdView{SnapshotID: o.SnapshotID}, nil
	}
	image := o.Image
	if image == "" && defaultImage != nil {
		image = *defaultImage
	}
	if image == "" {
		return createdView{}, ops.UsageErrorf("Sandbox image is required. Pass --image, use --file, or set defaults.image in the CLI config.")
	}
	if hasAuth && (o.AuthUsername == "" || o.AuthPassword == "") {
		return createdView{}, ops.UsageErrorf("Pass both --image-auth-username and --image-auth-password together.")
	}
	req.Image = &client.ImageSpec{URI: image}
	if hasAuth {
		req.Image.Auth = &client.ImageAuth{Username: o.AuthUsername, Password: o.AuthPassword}
	}
	if len(req.Entrypoint) == 0 {
		req.Entrypoint = defaultEntrypoint
	}
	return createdView{Image: image}, nil
}

// workloadFlagsGiven lists the flags a template forbids, in the order the
// official message names them.
func (o *createOptions) workloadFlagsGiven(hasAuth bool) []string {
	var bad []string
	add := func(set bool, name string) {
		if set {
			bad = append(bad, name)
		}
	}
	add(o.Image != "", "--image")
	add(hasAuth, "--image-auth-username/--image-auth-password")
	add(len(o.Env) > 0, "--env")
	add(len(o.Resources) > 0, "--resource")
	add(len(o.Entrypoint) > 0, "--entrypoint")
	add(o.VolumesFile != "", "--volumes-file")
	add(o.CredentialProxy, "--credential-proxy")
	return bad
}

// lifetime reads --timeout, else the config's defaults.timeout.
func (o *createOptions) lifetime(configured *string) (lifetime, error) {
	value, from := o.Timeout, "--timeout"
	if !o.TimeoutSet {
		if configured == nil || *configured == "" {
			return lifetime{}, nil
		}
		value, from = *configured, "defaults.timeout in the config file"
	}
	d, err := ops.ParseOptionalDuration(value)
	if err != nil {
		return lifetime{}, ops.UsageErrorf("invalid %s: %v", from, err)
	}
	if d == nil {
		return lifetime{Given: true, Manual: true}, nil
	}
	if *d == 0 {
		return lifetime{}, ops.UsageErrorf("invalid %s: a lifetime of 0 would end the sandbox at once; give a positive duration, or none to keep it until it is killed", from)
	}
	return lifetime{Given: true, D: *d}, nil
}

// readPayloadFiles loads --network-policy-file and --volumes-file.
func (o *createOptions) readPayloadFiles(req *client.CreateSandboxRequest) error {
	if o.NetworkPolicyFile != "" {
		v, err := ops.ReadJSONFile(o.NetworkPolicyFile, "network policy file")
		if err != nil {
			return err
		}
		if v, err = checkNetworkPolicy(v); err != nil {
			return ops.UsageErrorf("Invalid network policy file '%s': %v", o.NetworkPolicyFile, err)
		}
		if err := decodeInto(v, &req.NetworkPolicy); err != nil {
			return ops.UsageErrorf("Invalid network policy file '%s': %v", o.NetworkPolicyFile, err)
		}
	}
	if o.VolumesFile != "" {
		v, err := ops.ReadJSONFile(o.VolumesFile, "volumes file")
		if err != nil {
			return err
		}
		if _, ok := v.([]any); !ok {
			return ops.UsageErrorf("Volumes file must contain a JSON array, got %s.", jsonType(v))
		}
		if v, err = checkVolumes(v); err != nil {
			return ops.UsageErrorf("Invalid volumes file '%s': %v", o.VolumesFile, err)
		}
		if err := decodeInto(v, &req.Volumes); err != nil {
			return ops.UsageErrorf("Invalid volumes file '%s': %v", o.VolumesFile, err)
		}
	}
	return nil
}
