//go:build linux

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestEgressProxyOfASandbox drives a sandbox's egress proxy the way the
// runtime serves it (connections handed to enforceEgress's function): the
// create-time policy applies, a change through the data plane applies to
// the next request, and the policy answers say it is enforced.
func TestEgressProxyOfASandbox(t *testing.T) {
	t.Parallel()
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s answered %s", r.Host, r.URL.Path)
	}))
	defer outside.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != "pypi.example.test:80" && addr != "other.example.test:80" {
			return nil, fmt.Errorf("no such host in this test: %s", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, outside.Listener.Addr().String())
	}
	s, err := New(Options{Listen: "127.0.0.1:0", DataDir: t.TempDir(), NoIsolation: true, EgressDial: dial})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	call := func(method, path, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := call("POST", "/v1/sandboxes", `{"image":{"uri":"x"},"entrypoint":["sleep","3600"],"resourceLimits":{"cpu":"1"},
		"networkPolicy":{"defaultAction":"deny","egress":[{"action":"allow","target":"pypi.example.test"}]}}`, nil)
	var sb struct{ ID string }
	if json.Unmarshal([]byte(body), &sb); status != http.StatusAccepted {
		t.Fatalf("create: %d %s", status, body)
	}
	s.mu.Lock()
	rec := s.records[sb.ID]
	s.mu.Unlock()
	secret := map[string]string{SecureAccessHeader: rec.data.secret}
	if _, body := call("GET", "/sandboxes/"+sb.ID+"/proxy/18080/policy", "", secret); !strings.Contains(body, `"enforcementMode":"none"`) {
		t.Errorf("before the runtime enforces: %s", body)
	}

	serve := rec.data.enforceEgress()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // stands for 127.0.0.1:3128 inside the sandbox
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			serve(c)
		}
	}()
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()})}}
	fetch := func(u string) (int, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := fetch("http://pypi.example.test/simple"); status != 200 || body != "pypi.example.test answered /simple" {
		t.Errorf("allowed host: %d %q", status, body)
	}
	if status, _ := fetch("http://other.example.test/"); status != 403 {
		t.Errorf("denied host: %d", status)
	}
	if _, body := call("GET", "/sandboxes/"+sb.ID+"/proxy/18080/policy", "", secret); !strings.Contains(body, `"enforcementMode":"proxy"`) || strings.Contains(body, "reason") {
		t.Errorf("once enforced: %s", body)
	}
	// egress patch through the server's networkpolicy route: live.
	if status, body := call("PATCH", "/v1/sandboxes/"+sb.ID+"/networkpolicy", `[{"action":"allow","target":"other.example.test"}]`, nil); status != 200 {
		t.Fatalf("patch: %d %s", status, body)
	}
	if status, body := fetch("http://other.example.test/x"); status != 200 || body != "other.example.test answered /x" {
		t.Errorf("after the patch: %d %q", status, body)
	}
}
