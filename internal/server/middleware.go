package server

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"
)

// handler is the main listener's handler: request id, logging, auth, then
// the routes (both under / and /v1, like the real server).
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	s.routes(mux)
	return s.withRequestID(s.withAuth(jsonFallback(mux)))
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and Hijack (streams, WebSocket).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withRequestID echoes the client's X-Request-ID (or makes one) on every
// lifecycle response, and logs every request.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := r.Header.Get("X-Request-ID")
		if !validRequestID(rid) {
			rid = newUUID()
		}
		// Data-plane answers are execd's and the sidecar's, which carry no
		// request id; lifecycle answers do.
		if !proxyPath().MatchString(r.URL.EscapedPath()) {
			w.Header().Set("X-Request-ID", rid)
		}
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		defer func() { s.log.request(r.Method, r.URL.Path, sw.status, time.Since(start), rid) }()
		next.ServeHTTP(sw, r)
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func newUUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// proxyPath is the server proxy route: the data plane. The lifecycle key
// check does not apply to it; the route checks the key or the sandbox's
// secret itself (dataplane.go).
// Compiled on first use, not at start-up, which every command pays for.
var proxyPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(/v1)?/sandboxes/[^/]+/proxy/[0-9]+(/.*)?$`) })

// authExempt is decided on the path as sent, still escaped: decoded,
// /sandboxes/x%2Fproxy%2F1 would look like the proxy route, while the
// routes see a sandbox id "x/proxy/1" and serve a lifecycle request.
func authExempt(r *http.Request) bool {
	path := r.URL.EscapedPath()
	switch strings.TrimPrefix(path, "/v1") {
	case "/health", "/version":
		return true
	}
	return proxyPath().MatchString(path)
}

// withAuth requires OPEN-SANDBOX-API-KEY on every non-exempt route when a
// key is configured.
func (s *Server) withAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.APIKey == "" || authExempt(r) {
			next.ServeHTTP(w, r)
			return
		}
		key := r.Header.Get(apiKeyHeader)
		switch {
		case key == "":
			writeError(w, http.StatusUnauthorized, codeMissingAPIKey,
				"Authentication credentials were not provided. Please include OPEN-SANDBOX-API-KEY header.")
		case subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.APIKey)) != 1:
			writeError(w, http.StatusUnauthorized, codeInvalidAPIKey, "Invalid API key.")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// jsonFallback turns ServeMux's plain-text 404/405 into ErrorResponse JSON.
func jsonFallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		switch rec.Code {
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", rec.Header().Get("Allow"))
			writeError(w, rec.Code, codeMethodNotAllowed, "Method Not Allowed")
		case http.StatusNotFound:
			writeError(w, rec.Code, codeRouteNotFound, "Not Found")
		default: // a redirect to the cleaned path
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
		}
	})
}
