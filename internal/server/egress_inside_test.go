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
	"github.com/osb-dev/osb/internal/server/egress"
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

// TestEgressAddressRulesFromInsideASandbox: a deny for an address holds
// for every spelling of it that a sandbox may send its proxy (IPv4-mapped
// IPv6, the numeric forms of inet_aton), a deny for a CIDR block holds for
// the addresses in it, over HTTP and CONNECT; a block that cannot match is
// refused when the policy is patched, not stored and reported as enforced.
func TestEgressAddressRulesFromInsideASandbox(t *testing.T) {
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "outside answered") }))
	defer outside.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != "10.1.2.4:80" {
			return nil, fmt.Errorf("no such host in this test: %s", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, outside.Listener.Addr().String())
	}
	c := newClient(t, func(o *server.Options) { o.EgressDial = dial })
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	id := c.create(map[string]any{"networkPolicy": map[string]any{"defaultAction": "allow", "egress": []map[string]string{
		{"action": "deny", "target": "10.1.2.3"}, {"action": "deny", "target": "192.168.0.0/16"}}}})
	// Each request goes to the proxy as written, host and all, and the
	// first line of the answer and its body are printed.
	out, code := c.sh(id, `python3 -c '
import socket, sys
for line in sys.argv[1:]:
    method, target = line.split()
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(("%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % (method, target)).encode())
    answer = b""
    while not answer.endswith(b"\n") or b"\r\n\r\n" not in answer:
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
    head, _, body = answer.decode().partition("\r\n\r\n")
    print(line, "->", head.split("\r\n")[0], body.strip())
' 'GET http://[::ffff:10.1.2.3]/' 'GET http://[::ffff:a01:203]/' 'GET http://167838211/' 'GET http://0xa.1.2.3/' \
  'GET http://012.1.2.3/' 'GET http://10.1.515/' 'GET http://10.1.2.3./' 'GET http://192.168.7.7/' 'GET http://[::ffff:192.168.7.7]/' \
  'GET http://3232237319/' 'CONNECT [::ffff:10.1.2.3]:443' 'CONNECT 167838211:443' 'CONNECT 192.168.7.7:443' 'GET http://10.1.2.4/'`)
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) != 14 {
		t.Fatalf("the sandbox said (exit %d):\n%s", code, out)
	}
	for _, l := range lines[:13] {
		if !strings.Contains(l, "-> HTTP/1.1 403 Forbidden osb egress proxy: egress to ") || !strings.HasSuffix(l, " is denied by the sandbox's network policy") {
			t.Errorf("not denied by the policy: %s", l)
		}
	}
	if want := "GET http://10.1.2.4/ -> HTTP/1.1 200 OK outside answered"; lines[13] != want {
		t.Errorf("an address no rule names: %q, want %q", lines[13], want)
	}
	// A block that cannot match is an error at once; the policy is as before.
	bad := c.do("PATCH", "/sandboxes/"+id+"/networkpolicy", []map[string]string{{"action": "deny", "target": "10.0.0.0/33"}})
	if bad.status != 400 || !strings.Contains(string(bad.body), "a CIDR block is") {
		t.Errorf("patching 10.0.0.0/33: %d %s", bad.status, bad.body)
	}
	policy := string(c.expect(200, c.do("GET", "/sandboxes/"+id+"/networkpolicy", nil)).body)
	if strings.Contains(policy, "10.0.0.0") || !strings.Contains(policy, `"192.168.0.0/16"`) {
		t.Errorf("the policy after the refused patch: %s", policy)
	}
}

// TestEgressCapsTunnelsFromInsideASandbox: a sandbox that opens tunnel
// after tunnel through its egress proxy gets refusals once it holds
// egress.MaxConns of them, while the server and another sandbox go on as
// before.
func TestEgressCapsTunnelsFromInsideASandbox(t *testing.T) {
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "outside answered") }))
	defer outside.Close()
	c := newClient(t, func(o *server.Options) {
		d443, d80 := exampleDial(443, outside), exampleDial(80, outside)
		o.EgressDial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if strings.HasSuffix(addr, ":443") {
				return d443(ctx, network, addr)
			}
			return d80(ctx, network, addr)
		}
	})
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	greedy, other := c.create(nil), c.create(nil)
	// Tunnels are opened one after the other and all kept open; the
	// answers are counted by their status line.
	out, code := c.sh(greedy, `python3 -c '
import collections, socket, sys
held, answers = [], collections.Counter()
for i in range(int(sys.argv[1])):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT git.example.test:443 HTTP/1.1\r\nHost: git.example.test:443\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
    answers[answer.split(b"\r\n")[0].decode()] += 1
    held.append(s)
for k, v in sorted(answers.items()):
    print(v, k)
' `+itoa(egress.MaxConns+20))
	want := fmt.Sprintf("%d HTTP/1.1 200 Connection established\n20 HTTP/1.1 503 Service Unavailable", egress.MaxConns)
	if code != 0 || out != want {
		t.Errorf("tunnels from one sandbox (exit %d):\n%s\nwant:\n%s", code, out, want)
	}
	c.expect(200, c.do("GET", c.srv.URL()+"/health", nil))
	if got, _ := c.sh(other, "curl -s -m 60 -w ' %{http_code}' http://pypi.example.test/"); got != "outside answered 200" {
		t.Errorf("another sandbox's egress: %q", got)
	}
}
