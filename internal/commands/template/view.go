package template

import (
	"fmt"
	"strings"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/output"
)

// templateView is a template as osb prints it: the official client's
// snake_case keys in its order, every key present (null when unset).
type templateView struct {
	TemplateID     string            `json:"template_id" table:"1"`
	Image          string            `json:"image" table:"3"`
	Publish        string            `json:"publish"`
	Format         string            `json:"format" table:"4"`
	Status         statusView        `json:"status" table:"2"`
	CreatedAt      *client.Time      `json:"created_at" table:"5"`
	UpdatedAt      *client.Time      `json:"updated_at" table:"6"`
	ResourceLimits map[string]string `json:"resource_limits"`
	Entrypoint     []string          `json:"entrypoint"`
	Env            map[string]string `json:"env"`
	Metadata       map[string]string `json:"metadata"`
	Readiness      *readinessView    `json:"readiness"`
}

// statusView is a template's build status; a table shows its phase, and
// the failure message as a row of its own.
type statusView struct {
	Phase       string  `json:"phase"`
	ManifestRef *string `json:"manifest_ref"`
	Message     *string `json:"message"`
}

func (s statusView) TableCell() any { return s.Phase }

func (s statusView) TableDetails() output.Obj {
	if m := s.Message; m != nil && *m != "" {
		return output.Obj{{Key: "status_message", Value: *m}}
	}
	return nil
}

type readinessView struct {
	Probe         *string `json:"probe"`
	WarmupSeconds *int64  `json:"warmup_seconds"`
}

// TableCell is "<probe> warmup=<n>s", either part left out when unset.
func (r *readinessView) TableCell() any {
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

func newTemplateView(t *client.Template) templateView {
	v := templateView{
		TemplateID:     t.TemplateID,
		Image:          t.Image,
		Publish:        t.Publish,
		Format:         t.Format,
		Status:         statusView{Phase: t.Status.Phase, ManifestRef: t.Status.ManifestRef, Message: t.Status.Message},
		CreatedAt:      t.CreatedAt,
		UpdatedAt:      t.UpdatedAt,
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

// createdView is what create prints.
type createdView struct {
	TemplateID  string `json:"template_id"`
	Image       string `json:"image"`
	Status      string `json:"status"`
	RequestFile string `json:"request_file,omitempty"`
}
