package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Well-known sandbox ports.
const (
	PortExecd  = 44772
	PortEgress = 18080
)

// DataPlane sends requests to one port of one sandbox, replaying the
// endpoint's headers on every request, streams and transfers included.
type DataPlane struct {
	c         *Client
	SandboxID string
	Endpoint  *Endpoint
	t         target
}

// DataPlane resolves a sandbox port and returns a client bound to it.
func (c *Client) DataPlane(ctx context.Context, sandboxID string, port int) (*DataPlane, error) {
	ep, err := c.GetEndpoint(ctx, sandboxID, port)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(ep.Endpoint) == "" {
		return nil, fmt.Errorf("the server gave no address for port %d of sandbox %s", port, sandboxID)
	}
	// The endpoint has no scheme of its own: it is reached the way the
	// lifecycle server is, so an https server never hands out plain http.
	addr, err := parseAddress(c.addr.scheme, ep.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("the server gave an unusable address for port %d of sandbox %s: %w", port, sandboxID, err)
	}
	h := map[string]string{}
	// The key goes to the data plane only through the server's proxy, that
	// is to the server's own origin: in direct mode it would reach the
	// sandbox, which must not see it.
	if c.opts.UseServerProxy && c.opts.APIKey != "" && addr.origin == c.addr.origin {
		h[HeaderAPIKey] = c.opts.APIKey
	}
	if c.opts.ExecdToken != "" && port == PortExecd {
		h["X-EXECD-ACCESS-TOKEN"] = c.opts.ExecdToken
	}
	for k, v := range ep.Headers {
		h[k] = v
	}
	return &DataPlane{c: c, SandboxID: sandboxID, Endpoint: ep, t: target{addr: addr, headers: h}}, nil
}

// Do sends a request and decodes the JSON answer into out (see Client.Do).
func (d *DataPlane) Do(ctx context.Context, r *Request, out any) (http.Header, error) {
	return d.c.do(ctx, d.t, r, out)
}

// Stream sends a request and returns the open response (see Client.Stream).
func (d *DataPlane) Stream(ctx context.Context, r *Request) (*http.Response, error) {
	return d.c.stream(ctx, d.t, r)
}

// Ping checks that execd answers.
func (d *DataPlane) Ping(ctx context.Context) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/ping"}, nil)
	return err
}

// Metrics is execd's resource sample for the sandbox.
//
// The numbers are kept as the server wrote them (2 stays 2, 2.0 stays 2.0),
// so osb prints them with the type the server gave them.
type Metrics struct {
	CPUCount   json.Number `json:"cpu_count"`
	CPUUsedPct json.Number `json:"cpu_used_pct"`
	MemTotal   json.Number `json:"mem_total_mib"`
	MemUsed    json.Number `json:"mem_used_mib"`
	Timestamp  int64       `json:"timestamp"`
}

// Metrics fetches one sample.
func (d *DataPlane) Metrics(ctx context.Context) (*Metrics, error) {
	var m Metrics
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/metrics"}, &m)
	return &m, err
}
