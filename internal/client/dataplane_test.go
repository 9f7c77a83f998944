package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Through the server's proxy the data plane is the lifecycle server itself,
// so the API key goes along, with the endpoint's headers and the execd
// token; the -v log shows every exchange and never the key.
func TestProxyModeSendsKeyButNeverLogsIt(t *testing.T) {
	const key = "proxy-secret-key"
	var mu sync.Mutex
	var seen []string
	var addr string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery+" key="+r.Header.Get(HeaderAPIKey)+" gate="+r.Header.Get("X-Gate")+" token="+r.Header.Get("X-EXECD-ACCESS-TOKEN"))
		mu.Unlock()
		w.Header().Set("X-Request-ID", "rid-"+r.Method)
		if strings.Contains(r.URL.Path, "/endpoints/") {
			w.Write([]byte(`{"endpoint":"` + addr + `/sandboxes/abc/proxy/44772","headers":{"X-Gate":"g1"}}`))
		}
	}))
	defer srv.Close()
	addr = strings.TrimPrefix(srv.URL, "http://")
	var log strings.Builder
	c, err := New(Options{Domain: srv.URL, APIKey: key, UseServerProxy: true, ExecdToken: "tok", Debug: &log})
	if err != nil {
		t.Fatal(err)
	}
	dp, err := c.DataPlane(context.Background(), "abc", PortExecd)
	if err == nil {
		err = dp.Ping(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/v1/sandboxes/abc/endpoints/44772?use_server_proxy=true key=" + key + " gate= token=",
		"/sandboxes/abc/proxy/44772/ping? key=" + key + " gate=g1 token=tok",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != 2 || strings.Contains(log.String(), key) || strings.Contains(log.String(), "tok ") ||
		!strings.HasPrefix(lines[1], "* GET "+srv.URL+"/sandboxes/abc/proxy/44772/ping -> 200 (") ||
		!strings.HasSuffix(lines[1], ") request-id=rid-GET") {
		t.Errorf("-v log:\n%s", log.String())
	}
}

// A failed exchange is logged too, with what went wrong.
func TestDebugLogsTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	var log strings.Builder
	c, _ := New(Options{Domain: addr, APIKey: "k", Debug: &log})
	if _, err := c.GetSandbox(context.Background(), "abc"); err == nil {
		t.Fatal("no error from a closed server")
	}
	if l := log.String(); !strings.HasPrefix(l, "* GET "+addr+"/v1/sandboxes/abc -> error: ") || !strings.Contains(l, "connection refused") || strings.Count(l, "\n") != 1 {
		t.Errorf("log %q", l)
	}
}
