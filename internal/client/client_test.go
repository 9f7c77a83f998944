package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func newTestClient(t *testing.T, h http.HandlerFunc) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(Options{Domain: srv.URL, APIKey: "k", RequestTimeout: time.Minute, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func TestErrorShapes(t *testing.T) {
	cases := []struct {
		status      int
		contentType string
		body        string
		code, msg   string
	}{
		{404, "application/json", `{"code":"DOCKER::SANDBOX_NOT_FOUND","message":"Sandbox abc not found"}`, "DOCKER::SANDBOX_NOT_FOUND", "Sandbox abc not found"},
		{422, "application/json", `{"detail":[{"type":"greater_than_equal","loc":["body","timeout"],"msg":"Input should be greater than or equal to 60","input":5}]}`, "", "body.timeout: Input should be greater than or equal to 60"},
		{401, "application/json", `{"error":"Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN"}`, "", "Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN"},
		{502, "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>", "", "Bad Gateway (the server sent a non-JSON response)"},
		{500, "text/plain", "boom\nstack", "", "boom"},
		{400, "application/json", `{"detail":"bad thing"}`, "", "bad thing"},
	}
	for _, tc := range cases {
		c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.contentType)
			w.Header().Set("X-Request-ID", "rid-1")
			w.WriteHeader(tc.status)
			w.Write([]byte(tc.body))
		})
		_, err := c.GetSandbox(context.Background(), "abc")
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("%d: %T %v", tc.status, err, err)
		}
		if apiErr.Status != tc.status || apiErr.Code != tc.code || apiErr.Message != tc.msg || apiErr.RequestID != "rid-1" {
			t.Errorf("%d: got %+v", tc.status, apiErr)
		}
	}
}

func TestRetriesIdempotentOnly(t *testing.T) {
	var calls atomic.Int32
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`{"id":"abc","status":{"state":"Running"},"entrypoint":["x"]}`))
	})
	sb, err := c.GetSandbox(context.Background(), "abc")
	if err != nil || sb.ID != "abc" || calls.Load() != 2 {
		t.Fatalf("GET: %v %+v calls=%d", err, sb, calls.Load())
	}
	calls.Store(0)
	_, err = c.CreateSandbox(context.Background(), &CreateSandboxRequest{Image: &ImageSpec{URI: "x"}})
	if !IsStatus(err, http.StatusTooManyRequests) || calls.Load() != 1 {
		t.Fatalf("POST must not be retried: %v calls=%d", err, calls.Load())
	}
}

func TestRetryGivesUp(t *testing.T) {
	var calls atomic.Int32
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	err := c.DeleteSandbox(context.Background(), "abc")
	if !IsStatus(err, http.StatusServiceUnavailable) || calls.Load() != maxRetries+1 {
		t.Fatalf("%v calls=%d", err, calls.Load())
	}
}

func TestHeadersAndPaths(t *testing.T) {
	var got *http.Request
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Write([]byte(`{"items":[],"pagination":{"page":1,"pageSize":20,"totalItems":0,"totalPages":0,"hasNextPage":false}}`))
	})
	_, err := c.ListSandboxes(context.Background(), ListSandboxesParams{
		States: []string{"Running", "Paused"}, Metadata: [][2]string{{"team", "a b"}, {"k/x", "v&1"}}, PageSize: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.URL.Path != "/v1/sandboxes" || got.Header.Get(HeaderAPIKey) != "k" {
		t.Fatalf("path %s key %q", got.URL.Path, got.Header.Get(HeaderAPIKey))
	}
	q := got.URL.Query()
	if strings.Join(q["state"], ",") != "Running,Paused" || q.Get("pageSize") != "5" || q.Has("page") {
		t.Fatalf("query %v", q)
	}
	if m := q.Get("metadata"); m != "team=a%2520b&k%252Fx=v%2526"+"1" {
		t.Fatalf("metadata %q", m)
	}
}

func TestEndpointPathPrefixIsKept(t *testing.T) {
	var paths []string
	var srvAddr string
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path+"|"+r.Header.Get("X-Gate")+"|"+r.Header.Get(HeaderAPIKey))
		if strings.Contains(r.URL.Path, "/endpoints/") {
			w.Write([]byte(`{"endpoint":"` + srvAddr + `/sandboxes/abc/proxy/44772","headers":{"X-Gate":"g1"}}`))
			return
		}
		w.Write([]byte(`{}`))
	})
	srvAddr = strings.TrimPrefix(srv.URL, "http://")
	dp, err := c.DataPlane(context.Background(), "abc", PortExecd)
	if err != nil {
		t.Fatal(err)
	}
	if err := dp.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DataPlane(context.Background(), "abc", PortExecd); err != nil {
		t.Fatal(err)
	}
	want := []string{"/v1/sandboxes/abc/endpoints/44772||k", "/sandboxes/abc/proxy/44772/ping|g1|"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("requests %v, want %v (endpoint looked up once, key kept off the data plane)", paths, want)
	}
}

func TestConnectionRefusedAndTimeout(t *testing.T) {
	c, _ := New(Options{Domain: "127.0.0.1:1", RequestTimeout: time.Second})
	_, err := c.GetSandbox(context.Background(), "x")
	var connErr *ConnError
	if !errors.As(err, &connErr) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("refused: %T %v", err, err)
	}

	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer slow.Close()
	defer close(block)
	c, _ = New(Options{Domain: slow.URL, RequestTimeout: 200 * time.Millisecond})
	_, err = c.GetSandbox(context.Background(), "x")
	var timeoutErr *TimeoutError
	if !errors.As(err, &timeoutErr) {
		t.Fatalf("slow: %T %v", err, err)
	}
}

func TestDebugLogNeverShowsKey(t *testing.T) {
	var log strings.Builder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-ID", "r-9")
		w.Write([]byte(`{"id":"abc","status":{"state":"Running"}}`))
	}))
	defer srv.Close()
	c, _ := New(Options{Domain: srv.URL, APIKey: "very-secret", Debug: &log})
	if _, err := c.GetSandbox(context.Background(), "abc"); err != nil {
		t.Fatal(err)
	}
	line := log.String()
	if strings.Contains(line, "very-secret") || !strings.HasPrefix(line, "* GET "+srv.URL+"/v1/sandboxes/abc -> 200 (") || !strings.HasSuffix(line, ") request-id=r-9\n") {
		t.Fatalf("log %q", line)
	}
}
