//go:build linux

package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/sandbox"
	"github.com/osb-dev/osb/internal/testnet"
)

func dialTimeout(addr string) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, time.Second)
}

func TestEndpointShapes(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id, other := c.create(nil), c.create(nil)
	secret := ""
	for _, port := range []int{44772, 18080, 8080} {
		for _, proxy := range []bool{false, true} {
			e := c.endpoint(id, port, proxy)
			if want := c.srv.Addr() + "/sandboxes/" + id + "/proxy/" + itoa(port); e.Endpoint != want {
				t.Errorf("port %d proxy=%v: endpoint %q, want %q", port, proxy, e.Endpoint, want)
			}
			if secret == "" {
				secret = e.Headers[server.SecureAccessHeader]
			}
			if len(e.Headers) != 1 || len(secret) != 64 || e.Headers[server.SecureAccessHeader] != secret {
				t.Errorf("port %d proxy=%v: headers %v", port, proxy, e.Headers)
			}
		}
	}
	if o := c.endpoint(other, 44772, false).Headers[server.SecureAccessHeader]; o == secret || len(o) != 64 {
		t.Errorf("second sandbox's secret %q (first %q)", o, secret)
	}
	for _, port := range []string{"0", "65536", "x"} {
		c.expect(422, c.do("GET", "/sandboxes/"+id+"/endpoints/"+port, nil))
	}
	c.expect(422, c.do("GET", "/sandboxes/"+id+"/endpoints/80?use_server_proxy=maybe", nil))
	c.expect(400, c.do("GET", "/sandboxes/"+id+"/endpoints/80?use_server_proxy=true&expires=100", nil))
	c.expect(404, c.do("GET", "/sandboxes/nope/endpoints/80", nil))
}

// TestDataPlaneAuth: the data plane answers only to the API key or the
// sandbox's own secret, under / and /v1 alike.
func TestDataPlaneAuth(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	a, b := c.create(nil), c.create(nil)
	ea, eb := c.endpoint(a, 44772, false), c.endpoint(b, 44772, false)
	anon := *c
	anon.key = ""
	secretA, secretB := ea.Headers[server.SecureAccessHeader], eb.Headers[server.SecureAccessHeader]
	for _, base := range []string{c.srv.URL(), c.srv.URL() + "/v1"} {
		url := base + "/sandboxes/" + a + "/proxy/44772/ping"
		r := anon.expect(401, anon.do("GET", url, nil))
		if string(r.body) != `{"error":"Unauthorized: invalid or missing header OpenSandbox-Secure-Access"}`+"\n" {
			t.Errorf("no credential: %s", r.body)
		}
		anon.expect(403, anon.do("GET", url, nil, server.SecureAccessHeader, secretB))
		anon.expect(403, anon.do("GET", url, nil, server.SecureAccessHeader, "guess"))
		anon.expect(401, anon.do("GET", url, nil, "OPEN-SANDBOX-API-KEY", "wrong"))
		anon.expect(401, anon.do("GET", url, nil, "OPEN-SANDBOX-API-KEY", "wrong", server.SecureAccessHeader, secretA))
		anon.expect(200, anon.do("GET", url, nil, server.SecureAccessHeader, secretA))
		c.expect(200, c.do("GET", url, nil))
		// Every execd route sits under the endpoint, not only /ping.
		anon.expect(403, anon.do("POST", base+"/sandboxes/"+a+"/proxy/44772/command", `{"command":"true"}`, server.SecureAccessHeader, secretB))
		anon.expect(401, anon.do("GET", base+"/sandboxes/"+a+"/proxy/18080/policy", nil))
	}
	anon.expect(200, anon.dataDo(eb, "GET", "/ping"))
	r := anon.expect(200, anon.dataDo(ea, "GET", "/files/info?path=/workspace"))
	if !strings.Contains(string(r.body), "/workspace") {
		t.Errorf("files/info: %s", r.body)
	}
}

// appScript serves "app:<path>:<api key header>:<secret header>" on the
// port given as its argument, from inside a sandbox.
const appScript = `import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(s):
        b = ("app:%s:%s:%s" % (s.path, s.headers.get("OPEN-SANDBOX-API-KEY", ""), s.headers.get("OpenSandbox-Secure-Access", ""))).encode()
        s.send_response(200); s.send_header("Content-Length", str(len(b))); s.end_headers(); s.wfile.write(b)
    def log_message(s, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

// createApp makes a sandbox whose entrypoint serves appScript on a free
// port, and waits until the port answers through the data plane.
func (c *client) createApp() (id string, port int) {
	c.t.Helper()
	port = testnet.FreePort(c.t)
	id = c.create(map[string]any{"entrypoint": []string{"python3", "-c", appScript, itoa(port)}})
	e := c.endpoint(id, port, false)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if r := c.dataDo(e, "GET", "/up"); r.status == 200 {
			return id, port
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the app in sandbox %s never answered on port %d", id, port)
		}
	}
}

func TestDataPlaneProxiesOnlyTheSandboxsOwnPorts(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id, appPort := c.createApp()
	other := c.create(nil)
	var hostHits atomic.Int32
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hostHits.Add(1) }))
	defer host.Close()
	hostPort := host.Listener.Addr().(*net.TCPAddr).Port
	for _, proxy := range []bool{false, true} {
		e := c.endpoint(id, 44772, proxy)
		if r := c.dataDo(e, "GET", "/ping"); r.status != 200 || len(r.body) != 0 {
			t.Errorf("proxy=%v ping: %d %q", proxy, r.status, r.body)
		}
		r := c.expect(200, c.dataDo(e, "GET", "/metrics"))
		var m map[string]float64
		if err := json.Unmarshal(r.body, &m); err != nil || m["cpu_count"] < 1 || m["mem_total_mib"] <= 0 || m["mem_used_mib"] <= 0 || m["timestamp"] < 1e12 {
			t.Errorf("proxy=%v metrics %s (%v)", proxy, r.body, err)
		}
		if r := c.dataDo(e, "GET", "/nope"); r.status != 404 {
			t.Errorf("unknown execd route: %d", r.status)
		}
		// The sandbox's own service; neither credential reaches it.
		r = c.expect(200, c.dataDo(c.endpoint(id, appPort, proxy), "GET", "/hello"))
		if string(r.body) != "app:/hello::" {
			t.Errorf("proxy=%v app answered %q", proxy, r.body)
		}
		if r := c.dataDo(c.endpoint(id, 18080, proxy), "GET", "/policy"); r.status != 200 {
			t.Errorf("proxy=%v egress sidecar: %d %s", proxy, r.status, r.body)
		}
		// Another sandbox's port, a host service, a closed port: refused.
		for what, e := range map[string]endpoint{
			"other sandbox's port": c.endpoint(other, appPort, proxy),
			"host port":            c.endpoint(id, hostPort, proxy),
			"closed port":          c.endpoint(id, testnet.FreePort(t), proxy),
		} {
			if r := c.dataDo(e, "GET", "/"); r.status != 502 || string(r.body) != "Bad Gateway\n" {
				t.Errorf("proxy=%v %s: %d %q", proxy, what, r.status, r.body)
			}
		}
	}
	if n := hostHits.Load(); n != 0 {
		t.Errorf("the host service got %d requests through the data plane", n)
	}
}

func TestRenewOnAccess(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, bad := range []any{"299", "86401", "abc", "0300", " 600", "", "1e3"} {
		r := c.expect(400, c.do("POST", "/sandboxes", createBody(map[string]any{"extensions": map[string]any{"access.renew.extend.seconds": bad}})))
		if r.code() != "SANDBOX::INVALID_PARAMETER" || !strings.Contains(string(r.body), "access.renew.extend.seconds") {
			t.Errorf("%q: %s", bad, r.body)
		}
	}
	if n := c.expect(200, c.do("GET", "/sandboxes", nil)).json(t)["pagination"].(map[string]any)["totalItems"]; n != 0.0 {
		t.Errorf("refused creates left %v sandboxes", n)
	}
	expires := func(id string) time.Time {
		at, err := time.Parse(time.RFC3339Nano, c.expect(200, c.do("GET", "/sandboxes/"+id, nil)).json(t)["expiresAt"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	renewing := c.create(map[string]any{"timeout": 600, "extensions": map[string]any{"access.renew.extend.seconds": "86400"}})
	plain := c.create(map[string]any{"timeout": 600})
	before, plainBefore := expires(renewing), expires(plain)
	c.expect(200, c.dataDo(c.endpoint(renewing, 44772, false), "GET", "/ping"))
	c.expect(200, c.dataDo(c.endpoint(plain, 44772, false), "GET", "/ping"))
	if after := expires(renewing); after.Sub(before) < 80000*time.Second {
		t.Errorf("renew on access: expiresAt %v -> %v", before, after)
	}
	if after := expires(plain); !after.Equal(plainBefore) {
		t.Errorf("a sandbox without renew-on-access moved: %v -> %v", plainBefore, after)
	}
}

func TestMetricsWatch(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	e := c.endpoint(c.create(nil), 44772, false)
	req, _ := http.NewRequest("GET", "http://"+e.Endpoint+"/metrics/watch", nil)
	req.Header.Set(server.SecureAccessHeader, e.Headers[server.SecureAccessHeader])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	for i := 0; i < 2; i++ {
		if !sc.Scan() {
			t.Fatalf("stream ended: %v", sc.Err())
		}
		var m map[string]float64
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || len(m) != 5 {
			t.Errorf("line %q: %v", sc.Text(), err)
		}
	}
}

func TestPortHandlerHook(t *testing.T) {
	t.Parallel()
	c := newClient(t, func(o *server.Options) {
		o.PortHandlers = map[int]server.PortHandler{18080: func(sb *sandbox.Sandbox) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(sb.ID() + r.URL.Path)) })
		}}
	})
	id := c.create(nil)
	for _, proxy := range []bool{false, true} {
		if r := c.expect(200, c.dataDo(c.endpoint(id, 18080, proxy), "GET", "/policy")); string(r.body) != id+"/policy" {
			t.Errorf("proxy=%v egress hook answered %q", proxy, r.body)
		}
	}
}

// TestDataPlaneWithoutKeyNeedsNoCredential: a server without a key
// (--no-auth) hands out endpoints with no headers, and every port answers
// a request that carries no credential at all, as the real server's Docker
// runtime does. With a key the secret stays required (TestDataPlaneAuth).
func TestDataPlaneWithoutKeyNeedsNoCredential(t *testing.T) {
	t.Parallel()
	c := newClient(t, func(o *server.Options) { o.APIKey = "" })
	c.key = ""
	id, appPort := c.createApp()
	for _, port := range []int{44772, 18080, appPort} {
		for _, proxy := range []bool{false, true} {
			if e := c.endpoint(id, port, proxy); len(e.Headers) != 0 {
				t.Errorf("port %d proxy=%v: endpoint headers %v, want none", port, proxy, e.Headers)
			}
		}
	}
	base := c.srv.URL() + "/sandboxes/" + id + "/proxy/"
	c.expect(200, c.do("GET", base+"44772/ping", nil))
	c.expect(200, c.do("GET", base+"18080/policy", nil))
	if r := c.expect(200, c.do("GET", base+itoa(appPort)+"/hi", nil)); string(r.body) != "app:/hi::" {
		t.Errorf("app answered %q", r.body)
	}
}

// streamScript serves, on the port given as its argument, chunked answers:
// GET /stream sends 64 chunks of 1 KiB, POST /echo sends back each piece of
// the request body as it reads it, before the body has ended.
const streamScript = `import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def start(s):
        s.send_response(200); s.send_header("Transfer-Encoding", "chunked"); s.end_headers()
    def chunk(s, b):
        s.wfile.write(b"%x\r\n" % len(b) + b + b"\r\n"); s.wfile.flush()
    def do_GET(s):
        s.start()
        for i in range(64): s.chunk(b"%04d" % i + b"." * 1020)
        s.wfile.write(b"0\r\n\r\n"); s.wfile.flush()
    def do_POST(s):
        left = int(s.headers["Content-Length"]); s.start()
        while left > 0:
            b = s.rfile.read(min(left, 16384)); left -= len(b); s.chunk(b)
        s.wfile.write(b"0\r\n\r\n"); s.wfile.flush()
    def log_message(s, *a): pass
class S(http.server.ThreadingHTTPServer):
    request_queue_size = 128
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`

// TestProxiedStreamsArriveWhole: chunked answers through the proxy route of
// a sandbox's own port arrive whole, many at once, including answers that
// start while the request body is still on its way (the route is full
// duplex, as the execd route is).
func TestProxiedStreamsArriveWhole(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	port := testnet.FreePort(t)
	id := c.create(map[string]any{"entrypoint": []string{"python3", "-c", streamScript, itoa(port)}})
	e := c.endpoint(id, port, false)
	base := "http://" + e.Endpoint
	call := func(method, path string, body []byte) ([]byte, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set(server.SecureAccessHeader, e.Headers[server.SecureAccessHeader])
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("status %d: %.200s", resp.StatusCode, got)
		}
		return got, err
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := call("GET", "/stream", nil); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the streaming app never answered: %v", err)
		}
	}
	var wantStream bytes.Buffer
	for i := range 64 {
		fmt.Fprintf(&wantStream, "%04d%s", i, strings.Repeat(".", 1020))
	}
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		wg.Go(func() {
			if i%2 == 0 {
				if got, err := call("GET", "/stream", nil); err != nil || !bytes.Equal(got, wantStream.Bytes()) {
					errs <- fmt.Errorf("GET /stream: %d of %d bytes (%v)", len(got), wantStream.Len(), err)
				}
				return
			}
			if got, err := call("POST", "/echo", body); err != nil || !bytes.Equal(got, body) {
				errs <- fmt.Errorf("POST /echo: %d of %d bytes back (%v)", len(got), len(body), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
