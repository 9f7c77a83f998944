package client

import (
	"context"
	"net/http"
	"net/url"
)

// Template is a template (a golden-image build on real servers) as the
// lifecycle API returns it. Unknown phases are kept as strings.
type Template struct {
	TemplateID     string            `json:"templateId"`
	Image          string            `json:"image"`
	Publish        string            `json:"publish"`
	Format         string            `json:"format"`
	Status         TemplateStatus    `json:"status"`
	CreatedAt      *Time             `json:"createdAt,omitempty"`
	UpdatedAt      *Time             `json:"updatedAt,omitempty"`
	ResourceLimits map[string]string `json:"resourceLimits,omitempty"`
	Entrypoint     []string          `json:"entrypoint,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	Readiness      *Readiness        `json:"readiness,omitempty"`
}

// TemplateStatus is the build phase of a template and, when it failed, why.
type TemplateStatus struct {
	Phase       string  `json:"phase"`
	ManifestRef *string `json:"manifestRef,omitempty"`
	Message     *string `json:"message,omitempty"`
}

// Readiness is the build-side readiness gate of a template.
type Readiness struct {
	Probe         *string `json:"probe,omitempty"`
	WarmupSeconds *int64  `json:"warmupSeconds,omitempty"`
}

// CreateTemplateRequest is the body of POST /templates; nil and empty
// fields are left out.
type CreateTemplateRequest struct {
	Image          string            `json:"image"`
	Publish        string            `json:"publish"`
	ResourceLimits map[string]string `json:"resourceLimits,omitempty"`
	Entrypoint     []string          `json:"entrypoint,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	Format         string            `json:"format,omitempty"`
	Readiness      *Readiness        `json:"readiness,omitempty"`
}

// TemplateList is one page of templates.
type TemplateList = Page[Template]

// ListTemplatesParams filters a listing; zero values are left out.
type ListTemplatesParams struct {
	Metadata [][2]string
	Page     int
	PageSize int
}

func templatePath(id string) string { return "/templates/" + url.PathEscape(id) }

// CreateTemplate posts a CreateTemplateRequest.
func (c *Client) CreateTemplate(ctx context.Context, body *CreateTemplateRequest) (*Template, error) {
	var t Template
	_, err := c.Do(ctx, &Request{Method: http.MethodPost, Path: "/templates", JSON: body}, &t)
	if err == nil && t.TemplateID == "" {
		err = c.recordWithoutID("POST /templates", http.StatusCreated, "a template")
	}
	return &t, err
}

// GetTemplate fetches one template.
func (c *Client) GetTemplate(ctx context.Context, id string) (*Template, error) {
	var t Template
	_, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: templatePath(id)}, &t)
	if err == nil && t.TemplateID == "" {
		err = c.recordWithoutID("GET "+templatePath(id), http.StatusOK, "a template")
	}
	return &t, err
}

// ListTemplates fetches one page of templates.
func (c *Client) ListTemplates(ctx context.Context, p ListTemplatesParams) (*TemplateList, error) {
	q := pageQuery(p.Page, p.PageSize)
	if len(p.Metadata) > 0 {
		q.Set("metadata", EncodeMetadataFilter(p.Metadata))
	}
	var list TemplateList
	_, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: "/templates", Query: q}, &list)
	return &list, err
}

// DeleteTemplate deletes a template; sandboxes created from it keep running.
func (c *Client) DeleteTemplate(ctx context.Context, id string) error {
	_, err := c.Do(ctx, &Request{Method: http.MethodDelete, Path: templatePath(id)}, nil)
	return err
}
