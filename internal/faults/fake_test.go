package faults

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdtest"
)

// fake is a server that speaks just enough of the lifecycle and execd APIs
// for one test, and misbehaves where the test says. Every request it sees is
// logged, so a test can assert what reached the wire.
type fake struct {
	t   *testing.T
	srv *httptest.Server
	mux *http.ServeMux

	stop chan struct{} // closed when the test ends, before the server closes

	mu       sync.Mutex
	log      []string // "METHOD /path"
	handlers map[string]http.HandlerFunc
}

const apiKey = "fault-key"

func newFake(t *testing.T) *fake {
	f := &fake{t: t, mux: http.NewServeMux(), handlers: map[string]http.HandlerFunc{}, stop: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.stop) }) // runs first
	// Prefix resolution after a 404 lists sandboxes: there are none.
	f.handle("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"items": []any{},
			"pagination": map[string]any{"page": 1, "pageSize": 200, "totalItems": 0, "totalPages": 0, "hasNextPage": false}})
	})
	// Every sandbox's data plane lives on this server under /sb/{id}.
	f.handle("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"endpoint": f.addr() + "/sb/" + r.PathValue("id"), "headers": map[string]string{}})
	})
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.log = append(f.log, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	w.Header().Set("X-Request-ID", "req-42")
	f.mux.ServeHTTP(w, r)
}

// handle serves pattern with h; a later call replaces the handler.
func (f *fake) handle(pattern string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.handlers[pattern]; !ok {
		f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			h := f.handlers[pattern]
			f.mu.Unlock()
			h(w, r)
		})
	}
	f.handlers[pattern] = h
}

// hold keeps a handler from returning until the client hangs up or the
// test ends: a server that stalls without closing anything. (A handler
// that stopped reading the body never learns of the hang-up.)
func (f *fake) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.stop:
	}
}

func (f *fake) addr() string { return strings.TrimPrefix(f.srv.URL, "http://") }

// count is how many requests matched "METHOD /path".
func (f *fake) count(request string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, l := range f.log {
		if l == request {
			n++
		}
	}
	return n
}

// requests returns every request seen so far.
func (f *fake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// env runs osb in-process against the fake. Retries wait a millisecond
// instead of the real backoff: the tests count retries, not time them.
func (f *fake) env() *cmdtest.Env {
	e := cmdtest.Offline(f.t)
	e.Vars["OPEN_SANDBOX_DOMAIN"] = f.addr()
	e.Vars["OPEN_SANDBOX_API_KEY"] = apiKey
	e.ClientOptions = func(o *client.Options) { o.RetryBase = time.Millisecond }
	return e
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// streamStart answers with execd's event-stream headers, flushed.
func streamStart(w http.ResponseWriter) *http.ResponseController {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	rc := http.NewResponseController(w)
	rc.Flush()
	return rc
}

// event writes one bare-JSON frame, as execd does.
func event(w http.ResponseWriter, fields map[string]any) {
	fields["timestamp"] = 1700000000000
	b, _ := json.Marshal(fields)
	fmt.Fprintf(w, "%s\n\n", b)
	http.NewResponseController(w).Flush()
}

// reset hijacks the connection and drops it with a TCP reset: whatever the
// client was reading breaks off mid-way. Anything written so far but still
// buffered is flushed first.
func reset(t *testing.T, w http.ResponseWriter) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	buf.Flush()
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	conn.Close()
}

// rawWriter gives a hijacked connection's buffered writer, for a response
// written byte by byte (a body shorter than its Content-Length).
func hijack(t *testing.T, w http.ResponseWriter) (net.Conn, *bufio.ReadWriter) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Fatalf("hijack: %v", err)
	}
	return conn, buf
}
