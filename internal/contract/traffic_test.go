package contract

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// idOf reads "id" from a JSON object printed by osb.
func idOf(t *testing.T, out string, key string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	id, _ := v[key].(string)
	if id == "" {
		t.Fatalf("no %q in %s", key, out)
	}
	return id
}

// The sandbox lifecycle, as osb drives it: every request osb sends and
// every answer the local server gives must fit the contracts.
func TestSandboxLifecycleTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := idOf(t, h.run(0, "sandbox", "create", "-i", "python:3.11", "-t", "30m", "-m", "team=contract", "-e", "A=1", "-o", "json").Stdout, "id")
	h.run(0, "sandbox", "create", "-i", "python:3.11", "--timeout", "none", "--skip-health-check", "-o", "json")
	h.run(0, "sandbox", "list")
	h.run(0, "sandbox", "list", "-s", "running", "-s", "paused", "-m", "team=contract", "--page", "1", "--page-size", "5", "-o", "json")
	h.run(0, "sandbox", "list", "--all", "-o", "yaml")
	h.run(0, "sandbox", "get", id, "-o", "json")
	h.run(0, "sandbox", "get", id[:8])
	h.run(0, "sandbox", "endpoint", id, "-p", "44772", "-o", "json")
	h.run(0, "sandbox", "endpoint", id, "-p", "8080")
	h.run(0, "sandbox", "health", id, "-o", "json")
	h.run(0, "sandbox", "metrics", id, "-o", "json")
	h.run(0, "sandbox", "renew", id, "-t", "1h", "-o", "json")
	h.run(0, "sandbox", "pause", id)
	h.run(0, "sandbox", "resume", id)
	h.run(0, "--use-server-proxy", "sandbox", "health", id)
	h.watchMetrics(id)
	h.run(0, "sandbox", "kill", id)

	// Error answers go through the same checks.
	h.run(4, "sandbox", "get", "no-such-sandbox")
	h.run(4, "sandbox", "kill", id)
	h.run(3, "--api-key", "wrong", "sandbox", "list")
}

// Requests osb never sends (it validates first) still get answers in the
// documented shapes: probe the server directly with the client.
func TestServerErrorShapes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c, err := client.New(client.Options{Domain: h.env.Server.Addr(), APIKey: servertest.APIKey, HTTPClient: h.rec.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Every probe but the last two sends what the contract forbids.
	probe := func(method, path string, query url.Values, body any, status int) {
		t.Helper()
		_, err := c.Do(ctx, &client.Request{Method: method, Path: path, Query: query, JSON: body}, nil)
		if got := statusOf(err); got != status {
			t.Errorf("%s %s: status %d, want %d (%v)", method, path, got, status, err)
		}
		h.checkExchanges(method+" "+path, status >= 400)
	}
	probe(http.MethodGet, "/sandboxes", url.Values{"pageSize": {"500"}}, nil, 422)
	probe(http.MethodGet, "/sandboxes", url.Values{"metadata": {"%%%"}}, nil, 400)
	probe(http.MethodPost, "/sandboxes", nil, map[string]any{"image": map[string]any{"uri": "x"}, "timeout": 5,
		"resourceLimits": map[string]string{"cpu": "1"}, "entrypoint": []string{"tail", "-f", "/dev/null"}}, 422)
	probe(http.MethodPost, "/sandboxes", nil, map[string]any{"image": map[string]any{"uri": "x"}, "timeout": 60,
		"metadata": map[string]string{"bad key!": "v"}, "resourceLimits": map[string]string{"cpu": "1"},
		"entrypoint": []string{"tail", "-f", "/dev/null"}}, 400)
	probe(http.MethodGet, "/sandboxes/nope", nil, nil, 404)
	probe(http.MethodPost, "/sandboxes/nope/renew-expiration", nil, map[string]string{"expiresAt": "2000-01-01T00:00:00Z"}, 404)
	probe(http.MethodGet, "/sandboxes/nope/endpoints/70000", nil, nil, 422)
	// Routes the server serves that no osb command calls.
	id := h.createSandboxDirect(c)
	probe(http.MethodPatch, "/sandboxes/"+id+"/metadata", nil, map[string]any{"team": "contract", "gone": nil}, 200)
	probe(http.MethodPut, "/sandboxes/"+id+"/networkpolicy", nil,
		map[string]any{"defaultAction": "deny", "egress": []map[string]string{{"action": "allow", "target": "pypi.org"}}}, 200)
	probe(http.MethodGet, "/health", nil, nil, 200)
	probe(http.MethodGet, "/version", nil, nil, 200)
}

// probe sends one raw request, as no osb command would, expects its
// status, and checks the exchange; a 4xx probe sends what the contract
// forbids on purpose, so only its answer is checked.
func (h *harness) probe(method, url, body string, status int) {
	h.t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range h.headersFor(url) {
		req.Header.Set(k, v)
	}
	resp, err := h.rec.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		h.t.Errorf("%s %s: status %d, want %d", method, url, resp.StatusCode, status)
	}
	h.checkExchanges(method+" "+url, status >= 400)
}

func statusOf(err error) int {
	if err == nil {
		return 200
	}
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Status
	}
	return -1
}

// createSandboxDirect creates a sandbox with the client, as a probe.
func (h *harness) createSandboxDirect(c *client.Client) string {
	h.t.Helper()
	timeout := int64(600)
	sb, err := c.CreateSandbox(context.Background(), &client.CreateSandboxRequest{Image: &client.ImageSpec{URI: "python:3.11"},
		Timeout: &timeout, ResourceLimits: map[string]string{"cpu": "1"}, Entrypoint: []string{"tail", "-f", "/dev/null"}})
	if err != nil {
		h.t.Fatal(err)
	}
	h.checkExchanges("create (probe)", false)
	return sb.ID
}

// watchMetrics follows `sandbox metrics --watch` until the first sample is
// printed, then stops it as Ctrl-C would; what arrived is checked line by line.
func (h *harness) watchMetrics(id string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ios, _, _, _ := iostreams.Test()
	out := &untilLine{stop: cancel}
	ios.Out = out
	commands.Run(ctx, h.env.Factory(ios), []string{"sandbox", "metrics", id, "--watch", "-o", "json"})
	if !strings.Contains(out.String(), "cpu_count") {
		h.t.Errorf("metrics --watch printed no sample: %q", out.String())
	}
	h.checkExchanges("sandbox metrics --watch", false)
}

// untilLine keeps what is written and calls stop once a line is complete.
type untilLine struct {
	cmdtest.SyncBuffer
	stop context.CancelFunc
}

func (u *untilLine) Write(p []byte) (int, error) {
	n, err := u.SyncBuffer.Write(p)
	if strings.Contains(u.String(), "\n") {
		u.stop()
	}
	return n, err
}

// Endpoints that require a header (gateways, secure access): osb replays
// it on every data-plane request; a request without it gets execd's 401,
// whose {"error"} body the contracts describe.
func TestEndpointHeadersTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createSandbox()
	h.run(0, "command", "run", id, "--", "true")
	h.run(0, "file", "ls", id, "/workspace")
	h.run(0, "--use-server-proxy", "sandbox", "health", id)
	base := h.endpointOf(client.PortExecd)
	resp, err := h.rec.Client().Get(base + "/ping")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("ping without the endpoint header: %d, want 401", resp.StatusCode)
	}
	h.checkExchanges("GET /ping without the endpoint header", false)
}
