package template

import (
	"fmt"
	"strings"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

// templateView is a template as osb prints it: the official client's
// snake_case keys in its order, every key present (null when unset).
type templateView struct {
	TemplateID     string            `json:"template_id"`
	Image          string            `json:"image"`
	Publish        string            `json:"publish"`
	Format         string            `json:"format"`
	Status         statusView        `json:"status"`
	CreatedAt      *string           `json:"created_at"`
	UpdatedAt      *string           `json:"updated_at"`
	ResourceLimits map[string]string `json:"resource_limits"`
	Entrypoint     []string          `json:"entrypoint"`
	Env            map[string]string `json:"env"`
	Metadata       map[string]string `json:"metadata"`
	Readiness      *readinessView    `json:"readiness"`
}

type statusView struct {
	Phase       string  `json:"phase"`
	ManifestRef *string `json:"manifest_ref"`
	Message     *string `json:"message"`
}

type readinessView struct {
	Probe         *string `json:"probe"`
	WarmupSeconds *int64  `json:"warmup_seconds"`
}

func newTemplateView(t *client.Template) templateView {
	v := templateView{
		TemplateID:     t.TemplateID,
		Image:          t.Image,
		Publish:        t.Publish,
		Format:         t.Format,
		Status:         statusView{Phase: t.Status.Phase, ManifestRef: t.Status.ManifestRef, Message: t.Status.Message},
		CreatedAt:      cmdutil.Timestamp(t.CreatedAt),
		UpdatedAt:      cmdutil.Timestamp(t.UpdatedAt),
		ResourceLimits: t.ResourceLimits,
		Entrypoint:     t.Entrypoint,
		Env:            t.Env,
		Metadata:       t.Metadata,
	}
	if r := t.Readiness; r != nil {
		v.Readiness = &readinessView{Probe: r.Probe, WarmupSeconds: r.WarmupSeconds}
	}
	return v
}

// record is the template as a key/value table: status as its phase,
// readiness as one line, the failure message last.
func (v templateView) record() output.Obj {
	o := output.Obj{
		{Key: "template_id", Value: v.TemplateID},
		{Key: "image", Value: v.Image},
		{Key: "publish", Value: v.Publish},
		{Key: "format", Value: v.Format},
		{Key: "status", Value: v.Status.Phase},
		{Key: "created_at", Value: cmdutil.Optional(v.CreatedAt)},
		{Key: "updated_at", Value: cmdutil.Optional(v.UpdatedAt)},
		{Key: "resource_limits", Value: cmdutil.OptionalMap(v.ResourceLimits)},
		{Key: "entrypoint", Value: cmdutil.OptionalList(v.Entrypoint)},
		{Key: "env", Value: cmdutil.OptionalMap(v.Env)},
		{Key: "metadata", Value: cmdutil.OptionalMap(v.Metadata)},
		{Key: "readiness", Value: v.readinessText()},
	}
	if m := v.Status.Message; m != nil && *m != "" {
		o = append(o, output.KV{Key: "status_message", Value: *m})
	}
	return o
}

// readinessText is "<probe> warmup=<n>s", either part left out when unset.
func (v templateView) readinessText() any {
	r := v.Readiness
	if r == nil {
		return nil
	}
	var parts []string
	if r.Probe != nil && *r.Probe != "" {
		parts = append(parts, *r.Probe)
	}
	if r.WarmupSeconds != nil {
		parts = append(parts, fmt.Sprintf("warmup=%ds", *r.WarmupSeconds))
	}
	if len(parts) == 0 {
		return nil
	}
	return strings.Join(parts, " ")
}

// row is the template as one line of the list table.
func (v templateView) row() output.Obj {
	return output.Obj{
		{Key: "template_id", Value: v.TemplateID},
		{Key: "status", Value: v.Status.Phase},
		{Key: "image", Value: v.Image},
		{Key: "format", Value: v.Format},
		{Key: "created_at", Value: cmdutil.Optional(v.CreatedAt)},
		{Key: "updated_at", Value: cmdutil.Optional(v.UpdatedAt)},
	}
}
