//go:build linux

package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/osb-dev/osb/internal/server"
)

// TestEgressFromInsideASandbox: code in an isolated sandbox reaches the
// outside only through its egress proxy, which applies the live policy.
// "Outside" is a loopback server of this test, reached by name through the
// server's EgressDial; nothing else is dialled.
func TestEgressFromInsideASandbox(t *testing.T) {
	var direct atomic.Int32
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.Host, ".example.test") {
			direct.Add(1)
		}
		fmt.Fprintf(w, "%s answered %s", r.Host, r.URL.Path)
	}))
	defer outside.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !strings.HasSuffix(addr, ".example.test:80") {
			return nil, fmt.Errorf("no such host in this test: %s", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, outside.Listener.Addr().String())
	}
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
