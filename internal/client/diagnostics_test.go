package client

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestGetDiagnosticFromTheLocalServer(t *testing.T) {
	ctx := context.Background()
	c := localClient(t)
	sb := localSandbox(t, c)
	d, err := c.GetDiagnostic(ctx, sb.ID, DiagnosticEvents, "runtime")
	if err != nil || d.Kind != "events" || d.Delivery != DeliveryInline || d.Content == nil ||
		!strings.Contains(*d.Content, "(sandbox-"+sb.ID+")\nStatus:     running\n") || *d.ContentLength != int64(len(*d.Content)) {
		t.Fatalf("%+v, %v", d, err)
	}
	if _, err := c.GetDiagnostic(ctx, sb.ID, DiagnosticLogs, "nope"); !IsStatus(err, http.StatusBadRequest) {
		t.Errorf("unsupported scope: %v", err)
	}
	body, err := c.LegacyDiagnostic(ctx, sb.ID, "inspect", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	if b, _ := io.ReadAll(body); !strings.Contains(string(b), "\nSandbox:        "+sb.ID+"\n") {
		t.Errorf("inspect %q", b)
	}
}

func TestGetDiagnosticAnswers(t *testing.T) {
	var accept []string
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		accept = append(accept, r.Header.Get("Accept"))
		switch r.URL.Query().Get("scope") {
		case "text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte("plain\n"))
		case "todo":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotImplemented)
			w.Write([]byte(`{"code":"DIAGNOSTICS_NOT_IMPLEMENTED","message":"not here"}`))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("not json"))
		}
	})
	ctx := context.Background()
	d, err := c.GetDiagnostic(ctx, "sb1", DiagnosticLogs, "text")
	if err != nil || *d.Content != "plain\n" || d.Scope != "text" || d.SandboxID != "sb1" || *d.ContentLength != 6 {
		t.Errorf("text/plain answer: %+v, %v", d, err)
	}
	if _, err := c.GetDiagnostic(ctx, "sb1", DiagnosticLogs, "todo"); !IsStatus(err, http.StatusNotImplemented) {
		t.Errorf("501: %v", err)
	}
	if _, err := c.GetDiagnostic(ctx, "sb1", DiagnosticLogs, "junk"); err == nil || !strings.Contains(err.Error(), "cannot read the diagnostics answer") {
		t.Errorf("junk: %v", err)
	}
	body, err := c.LegacyDiagnostic(ctx, "sb1", "logs", nil)
	if err != nil {
		t.Fatal(err)
	}
	body.Close()
	if accept[len(accept)-1] != "text/plain" {
		t.Errorf("legacy Accept %q", accept[len(accept)-1])
	}
}
