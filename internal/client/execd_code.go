package client

import (
	"context"
	"net/http"
	"net/url"
)

// CodeContext is execd's CodeContext: a kernel that keeps its state
// between runs.
type CodeContext struct {
	ID       string `json:"id"`
	Language string `json:"language"`
}

// RunCodeRequest is execd's RunCodeRequest. An empty Context.ID runs the
// code in the language's default context.
type RunCodeRequest struct {
	Context CodeContext `json:"context"`
	Code    string      `json:"code"`
}

// CreateCodeContext starts a kernel of the language (POST /code/context).
func (d *DataPlane) CreateCodeContext(ctx context.Context, language string) (*CodeContext, error) {
	var out CodeContext
	_, err := d.Do(ctx, &Request{Method: http.MethodPost, Path: "/code/context", JSON: map[string]string{"language": language}}, &out)
	return &out, err
}

// CodeContexts lists the contexts of a language ("" for all).
func (d *DataPlane) CodeContexts(ctx context.Context, language string) ([]CodeContext, error) {
	var q url.Values
	if language != "" {
		q = url.Values{"language": {language}}
	}
	out := []CodeContext{}
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/code/contexts", Query: q}, &out)
	return out, err
}

// DeleteCodeContext shuts a context's kernel down.
func (d *DataPlane) DeleteCodeContext(ctx context.Context, id string) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodDelete, Path: "/code/contexts/" + url.PathEscape(id)}, nil)
	return err
}

// DeleteCodeContexts shuts down every context of a language.
func (d *DataPlane) DeleteCodeContexts(ctx context.Context, language string) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodDelete, Path: "/code/contexts", Query: url.Values{"language": {language}}}, nil)
	return err
}

// RunCode runs code in a context (POST /code) and returns its event
// stream. It is never retried: the code may have run.
func (d *DataPlane) RunCode(ctx context.Context, req *RunCodeRequest) (*EventStream, error) {
	return d.openStream(ctx, "/code", req)
}

// InterruptCode interrupts what runs in a context (DELETE /code?id=).
func (d *DataPlane) InterruptCode(ctx context.Context, id string) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodDelete, Path: "/code", Query: url.Values{"id": {id}}}, nil)
	return err
}
