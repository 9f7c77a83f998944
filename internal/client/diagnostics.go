package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
)

// Diagnostic is a DiagnosticContentResponse: diagnostic text, inline or
// behind a download URL.
type Diagnostic struct {
	SandboxID     string   `json:"sandboxId"`
	Kind          string   `json:"kind"`
	Scope         string   `json:"scope"`
	Delivery      string   `json:"delivery"`
	ContentType   string   `json:"contentType"`
	Truncated     bool     `json:"truncated"`
	Content       *string  `json:"content,omitempty"`
	ContentURL    *string  `json:"contentUrl,omitempty"`
	ContentLength *int64   `json:"contentLength,omitempty"`
	ExpiresAt     *Time    `json:"expiresAt,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// Diagnostic kinds, also the last element of their routes.
const (
	DiagnosticLogs   = "logs"
	DiagnosticEvents = "events"
)

// DeliveryInline marks a descriptor whose text is in Content.
const DeliveryInline = "inline"

func diagnosticsPath(sandboxID, route string) string {
	return sandboxPath(sandboxID) + "/diagnostics/" + route
}

// GetDiagnostic fetches the descriptor of a sandbox's logs or events for a
// scope. A server that answers plain text instead has its text returned as
// an inline descriptor.
func (c *Client) GetDiagnostic(ctx context.Context, sandboxID, kind, scope string) (*Diagnostic, error) {
	var raw []byte
	h, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: diagnosticsPath(sandboxID, kind),
		Query: url.Values{"scope": {scope}}}, &raw)
	if err != nil {
		return nil, err
	}
	ct := h.Get("Content-Type")
	if media, _, _ := mime.ParseMediaType(ct); media == "text/plain" {
		text := string(raw)
		n := int64(len(raw))
		return &Diagnostic{SandboxID: sandboxID, Kind: kind, Scope: scope, Delivery: DeliveryInline,
			ContentType: ct, Content: &text, ContentLength: &n}, nil
	}
	var d Diagnostic
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("cannot read the diagnostics answer: %w", err)
	}
	return &d, nil
}

// LegacyDiagnostic opens one of the deprecated plain-text diagnostics
// routes (logs, events, inspect, summary); the caller closes the body.
func (c *Client) LegacyDiagnostic(ctx context.Context, sandboxID, route string, q url.Values) (io.ReadCloser, error) {
	resp, err := c.Stream(ctx, &Request{Method: http.MethodGet, Path: diagnosticsPath(sandboxID, route), Query: q,
		Header: http.Header{"Accept": {"text/plain"}}})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
