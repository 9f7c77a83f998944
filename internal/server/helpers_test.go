//go:build linux

package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/nullcheck"
	"github.com/osb-dev/osb/internal/server/servertest"
)

type client struct {
	t    *testing.T
	srv  *server.Server
	base string
	key  string
}

func newClient(t *testing.T, opts ...func(*server.Options)) *client {
	srv := servertest.Start(t, opts...)
	return &client{t: t, srv: srv, base: srv.URL() + "/v1", key: servertest.APIKey}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return m
}

// code returns the ErrorResponse code of the body.
func (r response) code() string {
	var m struct{ Code string }
	json.Unmarshal(r.body, &m)
	return m.Code
}

func (c *client) do(method, url string, body any, hdr ...string) response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	if !strings.HasPrefix(url, "http") {
		url = c.base + url
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("OPEN-SANDBOX-API-KEY", c.key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if nulls := nullcheck.Paths(b); len(nulls) > 0 {
			c.t.Errorf("%s %s answered null at %s (unset fields are left out)", method, url, strings.Join(nulls[:min(len(nulls), 3)], ", "))
		}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (c *client) expect(status int, r response) response {
	c.t.Helper()
	if r.status != status {
		c.t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	return r
}

func createBody(extra map[string]any) map[string]any {
	b := map[string]any{
		"image":          map[string]any{"uri": "python:3.11"},
		"entrypoint":     []string{"tail", "-f", "/dev/null"},
		"resourceLimits": map[string]string{"cpu": "500m", "memory": "512Mi"},
		"timeout":        600,
	}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

// create makes a sandbox and returns its id.
func (c *client) create(extra map[string]any) string {
	c.t.Helper()
	r := c.expect(202, c.do("POST", "/sandboxes", createBody(extra)))
	return r.json(c.t)["id"].(string)
}

func (c *client) state(id string) string {
	c.t.Helper()
	r := c.expect(200, c.do("GET", "/sandboxes/"+id, nil))
	return r.json(c.t)["status"].(map[string]any)["state"].(string)
}

type endpoint struct {
	Endpoint string
	Headers  map[string]string
}

func (c *client) endpoint(id string, port int, proxy bool) endpoint {
	c.t.Helper()
	url := "/sandboxes/" + id + "/endpoints/" + itoa(port)
	if proxy {
		url += "?use_server_proxy=true"
	}
	r := c.expect(200, c.do("GET", url, nil))
	var e endpoint
	if err := json.Unmarshal(r.body, &e); err != nil || e.Headers == nil {
		c.t.Fatalf("endpoint body %s: %v", r.body, err)
	}
	return e
}

// dataDo calls the data plane through an endpoint, replaying its headers.
func (c *client) dataDo(e endpoint, method, path string) response {
	c.t.Helper()
	var hdr []string
	for k, v := range e.Headers {
		hdr = append(hdr, k, v)
	}
	return c.do(method, "http://"+e.Endpoint+path, nil, hdr...)
}

func itoa(n int) string { return strconv.Itoa(n) }

// eventually polls f until it returns true or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, f func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if f() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return f()
}
