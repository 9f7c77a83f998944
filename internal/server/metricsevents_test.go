//go:build linux

package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
)

// Every official SDK reports each create's latency to POST /v1/metrics/events
// and the real server answers 204 with no body.
func TestMetricsEventAccepted(t *testing.T) {
	t.Parallel()
	log := &cmdtest.SyncBuffer{}
	c := newClient(t, func(o *server.Options) { o.Log = log })
	r := c.do(http.MethodPost, "/metrics/events", map[string]any{
		"eventType": "sandbox.create", "createDurationMs": 1842, "success": true,
		"sandboxId": "sbx-1", "image": "python:3.12",
	}, "User-Agent", "OpenSandbox-Python-SDK/1.1.1")
	c.expect(http.StatusNoContent, r)
	if len(r.body) != 0 || r.header.Get("X-Request-ID") == "" {
		t.Errorf("body %q, X-Request-ID %q", r.body, r.header.Get("X-Request-ID"))
	}
	want := `sdk metrics: sandbox.create OpenSandbox-Python-SDK/1.1.1 in 1842ms, success true, sandbox "sbx-1", image "python:3.12"`
	if !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
	// A failed create has no sandbox id; the optional fields may be left out.
	c.expect(http.StatusNoContent, c.do(http.MethodPost, "/metrics/events",
		map[string]any{"eventType": "sandbox.create", "createDurationMs": 0, "success": false}))
	// Telemetry needs the API key like every other route.
	c.key = ""
	c.expect(http.StatusUnauthorized, c.do(http.MethodPost, "/metrics/events",
		map[string]any{"eventType": "sandbox.create", "createDurationMs": 0, "success": false}))
}

func TestMetricsEventValidation(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, tc := range []struct {
		name string
		body any
		want string // the 422 details' type@loc, in order
	}{
		{"empty object", map[string]any{}, "missing@eventType missing@createDurationMs missing@success"},
		{"wrong values", map[string]any{"eventType": "sandbox.delete", "createDurationMs": -1, "success": "yes"},
			"enum@eventType greater_than_equal@createDurationMs bool_type@success"},
		{"not a number", map[string]any{"eventType": "sandbox.create", "createDurationMs": "soon", "success": true},
			"int_parsing@createDurationMs"},
		{"not an object", []int{1}, "model_attributes_type@"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.expect(http.StatusUnprocessableEntity, c.do(http.MethodPost, "/metrics/events", tc.body))
			var got []string
			for _, d := range r.json(t)["detail"].([]any) {
				d := d.(map[string]any)
				loc := d["loc"].([]any)
				field := ""
				if len(loc) > 1 {
					field = loc[1].(string)
				}
				got = append(got, d["type"].(string)+"@"+field)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("details %v, want %s\nbody %s", got, tc.want, r.body)
			}
		})
	}
}
