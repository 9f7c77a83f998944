//go:build linux

package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server"
)

// TestEgressFromInsideASandbox: code in an isolated sandbox reaches the
// outside only through its egress proxy, which applies the live policy.
// "Outside" is a loopback server of this test, reached by name through the
// server's EgressDial; nothing else is dialled.
func TestEgressFromInsideASandbox(t *testing.T) {
	t.Parallel()
	var direct atomic.Int32
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.Host, ".example.test") {
			direct.Add(1)
		}
		fmt.Fprintf(w, "%s answered %s", r.Host, r.URL.Path)
	}))
	defer outside.Close()
	dial := exampleDial(80, outside)
	c := newClient(t, func(o *server.Options) { o.EgressDial = dial })
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	id := c.create(map[string]any{"networkPolicy": map[string]any{"defaultAction": "deny",
		"egress": []map[string]string{{"action": "allow", "target": "pypi.example.test"}}}})
	if body := string(c.dataDo(c.endpoint(id, 18080, false), "GET", "/policy").body); !strings.Contains(body, `"enforcementMode":"proxy"`) {
		t.Fatalf("policy of an isolated sandbox: %s", body)
	}
	curl := func(args string) string {
		t.Helper()
		out, _ := c.sh(id, "curl -s -m 60 "+args+" 2>&1; true")
		return out
	}
	if got := curl(`-w ' %{http_code}' http://pypi.example.test/simple`); got != "pypi.example.test answered /simple 200" {
		t.Errorf("allowed host: %q", got)
	}
	if got := curl(`-o /dev/null -w '%{http_code}' http://other.example.test/`); got != "403" {
		t.Errorf("denied host: %q", got)
	}
	if got := curl(`-o /dev/null -w '%{http_connect}' https://other.example.test/`); got != "403" {
		t.Errorf("denied CONNECT: %q", got)
	}
	// The policy is read live.
	c.expect(200, c.do("PATCH", "/sandboxes/"+id+"/networkpolicy", []map[string]string{{"action": "allow", "target": "other.example.test"}}))
	if got := curl(`-w ' %{http_code}' http://other.example.test/x`); got != "other.example.test answered /x 200" {
		t.Errorf("after the patch: %q", got)
	}
	// Around the proxy there is no way out: the test's server is on the
	// host's loopback, which is not the sandbox's.
	if got := curl(`--noproxy '*' -o /dev/null -w '%{http_code}' ` + outside.URL + "/"); got != "000" {
		t.Errorf("direct connection: %q", got)
	}
	if n := direct.Load(); n != 0 {
		t.Errorf("the host's loopback server was reached directly %d times", n)
	}
}

// TestTemplateSandboxEgressFollowsItsPolicy: a sandbox made from a template
// has no sidecar port, its policy is kept by the lifecycle server; its
// egress proxy still applies that policy, live, and says so.
func TestTemplateSandboxEgressFollowsItsPolicy(t *testing.T) {
	t.Parallel()
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s answered", r.Host)
	}))
	defer outside.Close()
	dial := exampleDial(80, outside)
	c := newClient(t, func(o *server.Options) { o.EgressDial = dial })
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	tpl := c.expect(201, c.do("POST", "/templates", map[string]any{"image": "python:3.11", "publish": "s3://bucket/tpl"})).json(t)["templateId"].(string)
	if !eventually(t, 30*time.Second, func() bool {
		return strings.Contains(string(c.do("GET", "/templates/"+tpl, nil).body), `"Succeeded"`)
	}) {
		t.Fatal("template never succeeded")
	}
	id := c.expect(202, c.do("POST", "/sandboxes", map[string]any{"templateId": tpl, "timeout": 600,
		"networkPolicy": map[string]any{"defaultAction": "deny", "egress": []map[string]string{{"action": "allow", "target": "pypi.example.test"}}}})).json(t)["id"].(string)
	path := "/sandboxes/" + id + "/networkpolicy"
	if body := string(c.expect(200, c.do("GET", path, nil)).body); !strings.Contains(body, `"enforcementMode":"proxy"`) {
		t.Errorf("policy of an isolated template sandbox: %s", body)
	}
	curl := func(url string) string {
		t.Helper()
		out, _ := c.sh(id, "curl -s -m 60 -w ' %{http_code}' "+url+" 2>&1; true")
		return out
	}
	if got := curl("http://pypi.example.test/"); got != "pypi.example.test answered 200" {
		t.Errorf("allowed host: %q", got)
	}
	if got := curl("-o /dev/null http://other.example.test/"); got != " 403" {
		t.Errorf("denied host: %q", got)
	}
	c.expect(200, c.do("PATCH", path, []map[string]string{{"action": "allow", "target": "other.example.test"}}))
	if got := curl("http://other.example.test/"); got != "other.example.test answered 200" {
		t.Errorf("after the patch: %q", got)
	}
}

// exampleDial is an EgressDial for tests: every name under example.test on
// port reaches the test's own server outside; nothing else is dialled.
func exampleDial(port int, outside *httptest.Server) func(context.Context, string, string) (net.Conn, error) {
	suffix := fmt.Sprintf(".example.test:%d", port)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !strings.HasSuffix(addr, suffix) {
			return nil, fmt.Errorf("no such host in this test: %s", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, outside.Listener.Addr().String())
	}
}

// TestEgressRefusesTheHostsAddresses: under the default allow-all policy a
// sandbox still cannot reach a service of the host through its egress
// proxy by the host's own non-loopback addresses (eth0, a ULA, a bridge),
// over HTTP or CONNECT, nor the server's own port there. The addresses are
// only targets the proxy must refuse before connecting: the test's service
// listens on loopback only, so nothing is sent anywhere even if it did not.
func TestEgressRefusesTheHostsAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer service.Close()
	c := newClient(t) // the real dialer: no EgressDial
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	addrs := hostAddresses(t)
	if len(addrs) == 0 {
		t.Skip("this host has no non-loopback address to try")
	}
	_, servicePort, _ := net.SplitHostPort(service.Listener.Addr().String())
	_, serverPort, _ := net.SplitHostPort(c.srv.Addr())
	id := c.create(nil)
	for _, ip := range addrs {
		for _, port := range []string{servicePort, serverPort} {
			target := net.JoinHostPort(ip.String(), port)
			out, _ := c.sh(id, "curl -s -m 60 -w ' %{http_code}' http://"+target+"/ 2>&1; true")
			if want := "osb egress proxy: " + ip.String() + " is an address of this host, which the egress proxy does not reach\n 403"; out != want {
				t.Errorf("HTTP to %s: %q, want %q", target, out, want)
			}
			out, _ = c.sh(id, "curl -s -m 60 -o /dev/null -w '%{http_connect}' https://"+target+"/ 2>&1; true")
			if out != "403" {
				t.Errorf("CONNECT to %s: %q, want 403", target, out)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the host's service answered %d requests", n)
	}
}

// hostAddresses are this host's own unicast addresses other than loopback
// and link-local ones.
func hostAddresses(t *testing.T) []netip.Addr {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, a := range ifAddrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, _ := netip.AddrFromSlice(n.IP)
		if ip = ip.Unmap(); ip.IsGlobalUnicast() && !ip.IsLoopback() {
			out = append(out, ip)
		}
	}
	return out
}
