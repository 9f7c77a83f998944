package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server/servertest"
)

// localClient starts a local server and returns a client for it.
func localClient(t *testing.T) *Client {
	t.Helper()
	srv := servertest.Start(t, servertest.NoIsolation)
	c, err := New(Options{Domain: srv.Addr(), APIKey: servertest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// localSandbox creates a sandbox running tail -f /dev/null.
func localSandbox(t *testing.T, c *Client) *Sandbox {
	t.Helper()
	sb, err := c.CreateSandbox(context.Background(), &CreateSandboxRequest{Image: &ImageSpec{URI: "python:3.11"},
		Entrypoint: []string{"tail", "-f", "/dev/null"}, ResourceLimits: map[string]string{"cpu": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func TestTemplatesAgainstTheLocalServer(t *testing.T) {
	ctx := context.Background()
	c := localClient(t)
	probe, warmup := "cmd://true", int64(3)
	created, err := c.CreateTemplate(ctx, &CreateTemplateRequest{Image: "python:3.11", Publish: "s3://b/p",
		Metadata: map[string]string{"team": "ml"}, Readiness: &Readiness{Probe: &probe, WarmupSeconds: &warmup}})
	if err != nil || created.Status.Phase != "Pending" || created.CreatedAt == nil || created.Format != "overlaybd" {
		t.Fatalf("create: %+v, %v", created, err)
	}
	if _, err := c.CreateTemplate(ctx, &CreateTemplateRequest{Image: "alpine", Publish: "s3://b"}); err != nil {
		t.Fatal(err)
	}
	got := created
	for deadline := time.Now().Add(30 * time.Second); got.Status.Phase == "Pending" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if got, err = c.GetTemplate(ctx, created.TemplateID); err != nil {
			t.Fatal(err)
		}
	}
	if got.Status.Phase != "Succeeded" || got.Status.Message == nil || *got.Readiness.WarmupSeconds != 3 || got.Metadata["team"] != "ml" {
		t.Errorf("get: %+v", got)
	}
	list, err := c.ListTemplates(ctx, ListTemplatesParams{Metadata: [][2]string{{"team", "ml"}}, PageSize: 1})
	if err != nil || len(list.Items) != 1 || list.Items[0].TemplateID != created.TemplateID || list.Pagination.TotalItems != 1 {
		t.Errorf("list: %+v, %v", list, err)
	}
	if list, _ := c.ListTemplates(ctx, ListTemplatesParams{PageSize: 1}); !list.Pagination.HasNextPage {
		t.Errorf("page 1 of 2: %+v", list.Pagination)
	}
	if err := c.DeleteTemplate(ctx, created.TemplateID); err != nil {
		t.Fatal(err)
	}
	var apiErr *APIError
	if _, err := c.GetTemplate(ctx, created.TemplateID); !errors.As(err, &apiErr) || apiErr.Status != 404 || !apiErr.CodeSuffix("TEMPLATE_NOT_FOUND") {
		t.Errorf("get deleted: %v", err)
	}
}

func TestTemplateRequestsOnTheWire(t *testing.T) {
	var paths, bodies []string
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		paths, bodies = append(paths, r.Method+" "+r.URL.RequestURI()), append(bodies, string(b))
		switch r.Method {
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case http.MethodPost:
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"templateId":"tpl_1","image":"x","publish":"s3://b","format":"native","status":{"phase":"Pending"},"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}`))
		default:
			w.Write([]byte(`{"items":[],"pagination":{"page":2,"pageSize":3,"totalItems":0,"totalPages":0,"hasNextPage":false}}`))
		}
	})
	ctx := context.Background()
	if _, err := c.CreateTemplate(ctx, &CreateTemplateRequest{Image: "x", Publish: "s3://b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTemplates(ctx, ListTemplatesParams{Metadata: [][2]string{{"a b", "c/d"}}, Page: 2, PageSize: 3}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTemplate(ctx, "tpl/1"); err != nil {
		t.Fatal(err)
	}
	want := []string{"POST /v1/templates", "GET /v1/templates?metadata=a%252520b%3Dc%25252Fd&page=2&pageSize=3", "DELETE /v1/templates/tpl%2F1"}
	for i := range want {
		if paths[i] != want[i] {
			t.Errorf("request %d: %s, want %s", i, paths[i], want[i])
		}
	}
	var body map[string]any
	if json.Unmarshal([]byte(bodies[0]), &body); len(body) != 2 || body["image"] != "x" || body["publish"] != "s3://b" {
		t.Errorf("create body %s: unset fields must be left out", bodies[0])
	}
}
