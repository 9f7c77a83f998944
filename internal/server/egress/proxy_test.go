//go:build linux

package egress_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server/egress"
)

// upstream is a loopback HTTP server standing in for an outside host; it
// records what reached it.
type upstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD path?query auth=<Authorization> key=<X-Api-Key> body=<body>"
}

func newUpstream(t *testing.T, name string) *upstream {
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.seen = append(u.seen, fmt.Sprintf("%s %s auth=%s key=%s body=%s", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), body))
		u.mu.Unlock()
		fmt.Fprintf(w, "%s says hi", name)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// fakeNet maps outside host names to loopback listeners the test started;
// any other name fails, so no test reaches a real address.
type fakeNet map[string]string

func (n fakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	to, ok := n[addr]
	if !ok {
		return nil, fmt.Errorf("no such host in this test: %s", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, to)
}

// proxyFor serves p on a loopback listener the way the runtime does inside
// a sandbox (each connection handed to ServeConn) and returns a client
// that uses it.
func proxyFor(t *testing.T, p *egress.Proxy) (*http.Client, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.ServeConn(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); p.Close() })
	proxyURL := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: time.Minute}, ln.Addr().String()
}

func get(t *testing.T, c *http.Client, method, rawURL, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, rawURL, strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestProxyEnforcesTheLivePolicy(t *testing.T) {
	api, other, deep := newUpstream(t, "api"), newUpstream(t, "other"), newUpstream(t, "deep")
	network := fakeNet{
		"api.example.test:80":      api.srv.Listener.Addr().String(),
		"other.example.test:80":    other.srv.Listener.Addr().String(),
		"a.b.svc.test:80":          deep.srv.Listener.Addr().String(),
		"svc.test:80":              deep.srv.Listener.Addr().String(),
		"blocked.svc.test:80":      deep.srv.Listener.Addr().String(),
		"api.example.test:443":     api.srv.Listener.Addr().String(),
		"other.example.test:443":   other.srv.Listener.Addr().String(),
		"API.Example.Test.:80":     api.srv.Listener.Addr().String(),
		"api.example.test.:80":     api.srv.Listener.Addr().String(),
		"unlisted.example.test:80": api.srv.Listener.Addr().String(),
	}
	policy := egress.Policy{DefaultAction: egress.Deny, Egress: []egress.Rule{
		{Action: egress.Allow, Target: "api.example.test"},
		{Action: egress.Deny, Target: "blocked.svc.test"},
		{Action: egress.Allow, Target: "*.svc.test"},
	}}
	sc := egress.New(nil, egress.Options{Policy: &policy})
	client, _ := proxyFor(t, sc.NewProxy(network.dial))

	for _, tc := range []struct {
		url    string
		status int
		body   string
	}{
		{"http://api.example.test/x?q=1", 200, "api says hi"},
		{"http://API.Example.Test./y", 200, "api says hi"},
		{"http://a.b.svc.test/", 200, "deep says hi"},
		{"http://other.example.test/", 403, "osb egress proxy: egress to other.example.test is denied by the sandbox's network policy\n"},
		{"http://svc.test/", 403, "osb egress proxy: egress to svc.test is denied by the sandbox's network policy\n"},
		{"http://blocked.svc.test/", 403, "osb egress proxy: egress to blocked.svc.test is denied by the sandbox's network policy\n"},
	} {
		if status, body := get(t, client, "GET", tc.url, ""); status != tc.status || body != tc.body {
			t.Errorf("GET %s: %d %q, want %d %q", tc.url, status, body, tc.status, tc.body)
		}
	}
	if got := other.requests(); len(got) != 0 {
		t.Errorf("a denied host was reached: %v", got)
	}
	if got := deep.requests(); len(got) != 1 {
		t.Errorf("svc.test hosts got %v, want the one allowed request", got)
	}

	// A change through the sidecar API applies to the next request.
	sidecarAPI := httptest.NewServer(sc)
	defer sidecarAPI.Close()
	s := &sidecar{t: t, url: sidecarAPI.URL}
	s.expect(200, "PATCH", "/policy", `[{"action":"deny","target":"api.example.test"},{"action":"allow","target":"other.example.test"}]`)
	if status, _ := get(t, client, "GET", "http://api.example.test/z", ""); status != 403 {
		t.Errorf("after the patch api.example.test answered %d, want 403", status)
	}
	if status, body := get(t, client, "GET", "http://other.example.test/", ""); status != 200 || body != "other says hi" {
		t.Errorf("after the patch other.example.test answered %d %q", status, body)
	}
	s.expect(200, "PUT", "/policy", `{"defaultAction":"allow"}`)
	if status, _ := get(t, client, "GET", "http://unlisted.example.test/", ""); status != 200 {
		t.Errorf("allow-all: %d", status)
	}

	// Requests that are not proxy requests are refused.
	_, addr := proxyFor(t, sc.NewProxy(network.dial))
	resp, err := http.Get("http://" + addr + "/policy")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("origin-form request: %d", resp.StatusCode)
	}
}

// connect opens a CONNECT tunnel through the proxy at addr and returns the
// status ("200 Connection established") and, when 200, the tunnel. A 200
// must be bare: no Transfer-Encoding or Content-Length, which HTTP forbids
// there (a strict client refuses the tunnel).
func connect(t *testing.T, addr, target string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	head, err := tp.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	status := strings.TrimPrefix(line, "HTTP/1.1 ")
	if !strings.HasPrefix(status, "200 ") {
		c.Close()
		return status, nil
	}
	if len(head) != 0 {
		t.Errorf("CONNECT %s: 200 with headers %v", target, head)
	}
	return status, &bufConn{Conn: c, r: br}
}

type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func TestProxyTunnelsOnlyToAllowedHosts(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	var mu sync.Mutex
	accepted := 0
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	network := fakeNet{"git.example.test:443": echo.Addr().String(), "evil.example.test:443": echo.Addr().String()}
	// The deny comes first: the first matching rule decides.
	policy := egress.Policy{DefaultAction: egress.Deny, Egress: []egress.Rule{{Action: egress.Deny, Target: "evil.example.test"}, {Action: egress.Allow, Target: "*.example.test"}}}
	sc := egress.New(nil, egress.Options{Policy: &policy})
	proxy := sc.NewProxy(network.dial)
	_, addr := proxyFor(t, proxy)

	status, tun := connect(t, addr, "git.example.test:443")
	if tun == nil || status != "200 Connection established" {
		t.Fatalf("CONNECT to an allowed host: %s", status)
	}
	fmt.Fprint(tun, "ping through the tunnel\n")
	line, err := bufio.NewReader(tun).ReadString('\n')
	if err != nil || line != "ping through the tunnel\n" {
		t.Errorf("tunnel echoed %q (%v)", line, err)
	}
	tun.Close()
	if status, tun := connect(t, addr, "evil.example.test:443"); tun != nil || status != "403 Forbidden" {
		t.Errorf("CONNECT to a denied host: %s", status)
	}
	mu.Lock()
	if accepted != 1 {
		t.Errorf("the outside listener accepted %d connections, want 1 (the allowed tunnel)", accepted)
	}
	mu.Unlock()

	// Closing the proxy (the sandbox goes away) cuts the tunnels still open.
	_, open := connect(t, addr, "git.example.test:443")
	if open == nil {
		t.Fatal("second tunnel refused")
	}
	proxy.Close()
	open.SetReadDeadline(time.Now().Add(time.Minute)) // a failure, not a hang, if it stays open
	if n, err := open.Read(make([]byte, 1)); err == nil {
		t.Errorf("the tunnel is still open after Close (read %d bytes)", n)
	}
}

func TestProxyInjectsVaultCredentialsIntoPlainHTTP(t *testing.T) {
	api, other := newUpstream(t, "api"), newUpstream(t, "other")
	network := fakeNet{"api.example.test:80": api.srv.Listener.Addr().String(), "other.example.test:80": other.srv.Listener.Addr().String(),
		"x.wild.test:80": api.srv.Listener.Addr().String()}
	policy := egress.Policy{DefaultAction: egress.Allow, Egress: []egress.Rule{
		{Action: egress.Allow, Target: "api.example.test"}, {Action: egress.Allow, Target: "*.wild.test"}, {Action: egress.Allow, Target: "other.example.test"}}}
	sc := egress.New(nil, egress.Options{Policy: &policy, CredentialProxy: true})
	sidecarAPI := httptest.NewServer(sc)
	defer sidecarAPI.Close()
	s := &sidecar{t: t, url: sidecarAPI.URL}
	s.expect(201, "POST", "/credential-vault", `{"credentials":[
		{"name":"token","source":{"type":"inline","value":"`+secret+`"}},
		{"name":"key","source":{"type":"inline","value":"k-123"}}],
	"bindings":[
		{"name":"api","match":{"hosts":["api.example.test"],"schemes":["http"],"paths":["/v1/*"]},
		 "auth":{"type":"bearer","credential":"token","substitutions":[{"credential":"key","placeholder":"KEY_HERE","in":["query","body"]}]}},
		{"name":"wild","match":{"hosts":["*.wild.test"],"schemes":["http"]},"auth":{"type":"apiKey","name":"X-Api-Key","credential":"key"}},
		{"name":"tls-only","match":{"hosts":["other.example.test"]},"auth":{"type":"bearer","credential":"token"}}]}`)
	client, _ := proxyFor(t, sc.NewProxy(network.dial))

	get(t, client, "POST", "http://api.example.test/v1/items?k=KEY_HERE", `{"key":"KEY_HERE"}`)
	get(t, client, "GET", "http://api.example.test/other", "")
	get(t, client, "GET", "http://x.wild.test/", "")
	get(t, client, "GET", "http://other.example.test/", "")
	want := []string{
		"POST /v1/items?k=k-123 auth=Bearer " + secret + ` key= body={"key":"k-123"}`,
		"GET /other auth= key= body=", // path outside the binding
		"GET / auth= key=k-123 body=", // wildcard binding
	}
	if got := api.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("api got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A binding for https only is not applied to plain HTTP.
	if got := other.requests(); len(got) != 1 || got[0] != "GET / auth= key= body=" {
		t.Errorf("other got %v", got)
	}
}

func TestProxyReportsEnforcement(t *testing.T) {
	sc := egress.New(nil, egress.Options{})
	api := httptest.NewServer(sc)
	defer api.Close()
	s := &sidecar{t: t, url: api.URL}
	if got := s.expect(200, "GET", "/policy", ""); !strings.Contains(got, `"enforcementMode":"none","reason":"`+egress.NotEnforced+`"`) {
		t.Errorf("before: %s", got)
	}
	sc.SetEnforcement(egress.ProxyEnforcement)
	if got := s.expect(200, "GET", "/policy", ""); got != `{"status":"ok","mode":"allow_all","enforcementMode":"proxy","policy":{"defaultAction":"allow","egress":[]}}`+"\n" {
		t.Errorf("after: %s", got)
	}
	if got := s.expect(200, "PATCH", "/policy", `[{"action":"deny","target":"x.test"}]`); got != `{"status":"ok","mode":"enforcing","enforcementMode":"proxy"}`+"\n" {
		t.Errorf("patch: %s", got)
	}
	if got := s.expect(200, "DELETE", "/policy", `["nope.test"]`); got != `{"status":"ok","mode":"enforcing","enforcementMode":"proxy","reason":"no matching targets found"}`+"\n" {
		t.Errorf("delete of an unknown target: %s", got)
	}
}

// TestProxyNeverReachesTheHost: the default dialer refuses every address
// of the host, whatever the policy, however the address is written or
// named, including addresses that appear after the proxy started; each
// refusal says why and nothing reaches the host's listener. The test runs
// in a network namespace of its own (inOwnNetwork), where it gives the
// "host" an interface with IPv4 and IPv6 (ULA) addresses and a local range.
func TestProxyNeverReachesTheHost(t *testing.T) {
	if !inOwnNetwork(t) {
		return
	}
	run(t, "ip link set lo up",
		"ip link add osb0 type veth peer name osb1",
		"ip addr add 10.99.0.1/24 dev osb0",
		"ip -6 addr add fd99::1/64 dev osb0 nodad",
		"ip link set osb0 up", "ip link set osb1 up")
	hosts := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hosts, []byte("127.0.0.1 localhost\n10.99.0.1 inside.test\nfd99::1 inside6.test\n10.97.3.4 anyip.test\n"), 0o644)
	run(t, "mount --bind "+hosts+" /etc/hosts")

	var accepted atomic.Int32
	ln, err := net.Listen("tcp", ":0") // every address of this namespace, v4 and v6
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
			accepted.Add(1)
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	// A veth's IPv6 address has its local route only once the link's
	// carrier is seen, which the kernel reports late under load; until
	// then neither the proxy nor anything else could reach it.
	probes := []string{"10.99.0.1", "fd99::1"}
	for _, ip := range probes {
		awaitDial(t, net.JoinHostPort(ip, port))
	}
	for deadline := time.Now().Add(time.Minute); accepted.Load() < int32(len(probes)); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listener never accepted the probes")
		}
	}
	accepted.Store(0)
	sc := egress.New(nil, egress.Options{}) // allow-all
	client, addr := proxyFor(t, sc.NewProxy(nil))
	refused := func(host, ip string) {
		t.Helper()
		want := "osb egress proxy: " + ip + " is an address of this host, which the egress proxy does not reach\n"
		if status, body := get(t, client, "GET", "http://"+net.JoinHostPort(host, port)+"/secret", ""); status != 403 || body != want {
			t.Errorf("GET via %s: %d %q, want 403 %q", host, status, body, want)
		}
		if st, tun := connect(t, addr, net.JoinHostPort(host, port)); tun != nil || st != "403 Forbidden" {
			t.Errorf("CONNECT to %s: %s", host, st)
		}
	}
	for host, ip := range map[string]string{
		"127.0.0.1": "127.0.0.1", "::1": "::1", "localhost": "127.0.0.1", "127.1": "127.0.0.1",
		"10.99.0.1": "10.99.0.1", "fd99::1": "fd99::1", "::ffff:10.99.0.1": "10.99.0.1",
		"174260225": "10.99.0.1", "0xa.99.0.1": "10.99.0.1", "012.0143.0.01": "10.99.0.1",
		"inside.test": "10.99.0.1", "INSIDE.test.": "10.99.0.1", "inside6.test": "fd99::1",
	} {
		refused(host, ip)
	}
	// Addresses added now, on the interface and as a local range that no
	// interface lists, are refused as well.
	run(t, "ip addr add 10.98.0.1/32 dev osb1", "ip route add local 10.97.0.0/16 dev lo")
	refused("10.98.0.1", "10.98.0.1")
	refused("10.97.3.4", "10.97.3.4")
	refused("anyip.test", "10.97.3.4")
	// Whatever the policy: a rule that allows the address, or a name of
	// it, changes nothing.
	allow := egress.Policy{DefaultAction: egress.Deny, Egress: []egress.Rule{
		{Action: egress.Allow, Target: "10.99.0.0/16"}, {Action: egress.Allow, Target: "inside.test"}}}
	client, addr = proxyFor(t, egress.New(nil, egress.Options{Policy: &allow}).NewProxy(nil))
	refused("10.99.0.1", "10.99.0.1")
	refused("inside.test", "10.99.0.1")
	if n := accepted.Load(); n != 0 {
		t.Errorf("the host's listener accepted %d connections through the proxy", n)
	}
	// The listener was reachable all along: the proxy refused, nothing failed.
	for _, ip := range []string{"10.99.0.1", "fd99::1", "10.98.0.1", "10.97.3.4"} {
		c, err := net.Dial("tcp", net.JoinHostPort(ip, port))
		if err != nil {
			t.Fatalf("direct dial of %s: %v", ip, err)
		}
		c.Close()
	}
}

// awaitDial waits until addr takes connections.
func awaitDial(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never took a connection: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inOwnNetwork runs the calling test again in network and mount namespaces
// of its own, inside a user namespace (so it needs no root): it returns true
// in that run, false in the outer one, which only reports the inner one.
func inOwnNetwork(t *testing.T) bool {
	t.Helper()
	const mark = "OSB_TEST_OWN_NETWORK"
	if os.Getenv(mark) == t.Name() {
		return true
	}
	if out, err := exec.Command("unshare", "-rnm", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot make a user and network namespace here (unshare -rnm: %v %s)", err, bytes.TrimSpace(out))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "-rnm", self, "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), mark+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("in its own network namespace: %v\n%s", err, out)
	}
	return false
}

// run runs shell commands, failing the test on the first that fails.
func run(t *testing.T, cmds ...string) {
	t.Helper()
	for _, c := range cmds {
		if out, err := exec.Command("sh", "-c", c).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", c, err, out)
		}
	}
}

// TestProxyCapsConnectionsPerSandbox: a sandbox that opens more connections
// to its proxy than MaxConns (tunnels, requests, idle ones) gets a 503 for
// the extra ones, while another sandbox's proxy serves as before; a closed
// connection gives its place back.
func TestProxyCapsConnectionsPerSandbox(t *testing.T) {
	defer func(n int) { egress.MaxConns = n }(egress.MaxConns)
	egress.MaxConns = 8
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	network := fakeNet{"git.example.test:443": echo.Addr().String()}
	_, greedy := proxyFor(t, egress.New(nil, egress.Options{}).NewProxy(network.dial))
	_, other := proxyFor(t, egress.New(nil, egress.Options{}).NewProxy(network.dial))

	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for i := range egress.MaxConns {
		if i%2 == 0 {
			_, tun := connect(t, greedy, "git.example.test:443")
			if tun == nil {
				t.Fatalf("tunnel %d refused", i)
			}
			open = append(open, tun)
			continue
		}
		c, err := net.Dial("tcp", greedy) // idle: no request yet
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	refusal := "503 Service Unavailable"
	body := "osb egress proxy: this sandbox has 8 connections open through the proxy, its limit; close some first\n"
	if st, tun := connect(t, greedy, "git.example.test:443"); tun != nil || st != refusal {
		t.Errorf("tunnel beyond the cap: %q", st)
	}
	c, err := net.Dial("tcp", greedy)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(c)
	c.Close()
	if !strings.HasSuffix(string(got), "\r\n\r\n"+body) || !strings.HasPrefix(string(got), "HTTP/1.1 "+refusal+"\r\n") {
		t.Errorf("connection beyond the cap got %q", got)
	}
	// Another sandbox does not notice.
	if st, tun := connect(t, other, "git.example.test:443"); tun == nil {
		t.Errorf("another sandbox's tunnel: %q", st)
	} else {
		tun.Close()
	}
	// A tunnel closed gives its place back.
	open[0].Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if st, tun := connect(t, greedy, "git.example.test:443"); tun != nil {
			open[0] = tun
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no place after a tunnel closed: %q", st)
		}
	}
}

// TestProxyBoundsWhatAConnectionHolds: what one connection makes the
// server hold outside the sandbox's cgroup is bounded, so that the cap on
// connections bounds a sandbox's cost (docs/security.md): a request or an
// answer with headers over 32 KiB is refused, and requests to many hosts
// over one connection leave at most 16 upstream connections open for
// reuse, not one per host.
func TestProxyBoundsWhatAConnectionHolds(t *testing.T) {
	var open atomic.Int32
	big := strings.Repeat("x", 64<<10)
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("X-Big", big)
		}
		fmt.Fprint(w, "hi")
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	up.Start()
	defer up.Close()
	network := fakeNet{}
	for i := range 64 {
		network[fmt.Sprintf("h%d.example.test:80", i)] = up.Listener.Addr().String()
	}
	client, _ := proxyFor(t, egress.New(nil, egress.Options{}).NewProxy(network.dial))

	req, _ := http.NewRequest("GET", "http://h0.example.test/", nil)
	req.Header.Set("X-Big", big)
	if resp, err := client.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a request with 64 KiB of headers: %d, want 431", resp.StatusCode)
	}
	if status, body := get(t, client, "GET", "http://h0.example.test/big", ""); status != 502 {
		t.Errorf("an answer with 64 KiB of headers: %d %q, want 502", status, body)
	}
	for i := range 64 {
		if status, body := get(t, client, "GET", fmt.Sprintf("http://h%d.example.test/", i), ""); status != 200 || body != "hi" {
			t.Fatalf("request %d: %d %q", i, status, body)
		}
	}
	// Idle upstream connections are closed after 30 s; the excess ones
	// must be gone long before that.
	for deadline := time.Now().Add(15 * time.Second); open.Load() > 16; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d upstream connections left open by requests to 64 hosts over one connection", open.Load())
		}
	}
}
