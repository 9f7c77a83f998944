//go:build linux

package server_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

func dialTimeout(addr string) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, time.Second)
}

func TestEndpointShapes(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id := c.create(nil)
	direct := c.endpoint(id, 44772, false)
	if strings.Contains(direct.Endpoint, "/") || !strings.HasPrefix(direct.Endpoint, "127.0.0.1:") || len(direct.Headers) != 0 {
		t.Errorf("direct execd endpoint %+v", direct)
	}
	if e := c.endpoint(id, 8080, false); e.Endpoint != direct.Endpoint+"/proxy/8080" {
		t.Errorf("direct 8080 endpoint %+v", e)
	}
	if e := c.endpoint(id, 44772, true); e.Endpoint != c.srv.Addr()+"/sandboxes/"+id+"/proxy/44772" {
		t.Errorf("proxy endpoint %+v", e)
	}
	for _, port := range []string{"0", "65536", "x"} {
		c.expect(422, c.do("GET", "/sandboxes/"+id+"/endpoints/"+port, nil))
	}
	c.expect(422, c.do("GET", "/sandboxes/"+id+"/endpoints/80?use_server_proxy=maybe", nil))
	c.expect(400, c.do("GET", "/sandboxes/"+id+"/endpoints/80?use_server_proxy=true&expires=100", nil))
	c.expect(404, c.do("GET", "/sandboxes/nope/endpoints/80", nil))
}

func TestDataPlaneThroughBothEndpoints(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id := c.create(nil)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("app:" + r.URL.Path + ":" + r.Header.Get("OPEN-SANDBOX-API-KEY")))
	}))
	defer app.Close()
	appPort, _ := strconv.Atoi(app.URL[strings.LastIndexByte(app.URL, ':')+1:])
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
		// Other ports are proxied to the host loopback; the API key never reaches them.
		r = c.expect(200, c.dataDo(c.endpoint(id, appPort, proxy), "GET", "/hello"))
		if string(r.body) != "app:/hello:" {
			t.Errorf("proxy=%v app answered %q", proxy, r.body)
		}
		if r := c.dataDo(c.endpoint(id, 18080, proxy), "GET", "/policy"); r.status != 200 {
			t.Errorf("proxy=%v egress sidecar: %d %s", proxy, r.status, r.body)
		}
		if r := c.dataDo(c.endpoint(id, closedPort(t), proxy), "GET", "/"); r.status != 502 {
			t.Errorf("proxy=%v nothing listening: %d", proxy, r.status)
		}
	}
}

func TestMetricsWatch(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	e := c.endpoint(c.create(nil), 44772, false)
	resp, err := http.Get("http://" + e.Endpoint + "/metrics/watch")
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

func TestEndpointHeaders(t *testing.T) {
	t.Parallel()
	c := newClient(t, func(o *server.Options) { o.EndpointHeaders = true })
	id := c.create(nil)
	for _, proxy := range []bool{false, true} {
		e := c.endpoint(id, 44772, proxy)
		token := e.Headers[server.TokenHeader]
		if len(token) < 16 {
			t.Fatalf("headers %v", e.Headers)
		}
		r := c.do("GET", "http://"+e.Endpoint+"/ping", nil)
		var body map[string]string
		json.Unmarshal(r.body, &body)
		if r.status != 401 || !strings.Contains(body["error"], server.TokenHeader) {
			t.Errorf("proxy=%v without header: %d %s", proxy, r.status, r.body)
		}
		c.expect(401, c.do("GET", "http://"+e.Endpoint+"/ping", nil, server.TokenHeader, "wrong"))
		c.expect(200, c.dataDo(e, "GET", "/ping"))
	}
	// secureAccess asks for the same protection on one sandbox.
	plain := newClient(t)
	e := plain.endpoint(plain.create(map[string]any{"secureAccess": true}), 44772, false)
	if len(e.Headers) != 1 {
		t.Errorf("secureAccess headers %v", e.Headers)
	}
	plain.expect(401, plain.do("GET", "http://"+e.Endpoint+"/ping", nil))
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

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}
