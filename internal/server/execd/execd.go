// Package execd serves the per-sandbox data-plane API compatible with the
// OpenSandbox execd daemon. Each file registers its own routes; add a file's
// registrar to (*handler).routes.
package execd

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"time"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// TokenHeader is the header the real execd checks when started with --access-token.
const TokenHeader = "X-EXECD-ACCESS-TOKEN"

// Options configures the handler.
type Options struct {
	// AccessToken, when set, makes every request require TokenHeader with this
	// value, checked before routing as the real execd does.
	AccessToken string
	// MetricsInterval is the /metrics/watch cadence and the /metrics CPU
	// sampling window. Zero means one second, like the real execd's sampling.
	MetricsInterval time.Duration
}

// handler holds what every route needs; route files add methods to it.
type handler struct {
	sb   *sandbox.Sandbox
	opts Options
	mux  *http.ServeMux
}

// New returns the execd API of one sandbox.
func New(sb *sandbox.Sandbox, opts Options) http.Handler {
	if opts.MetricsInterval <= 0 {
		opts.MetricsInterval = time.Second
	}
	h := &handler{sb: sb, opts: opts, mux: http.NewServeMux()}
	h.routes(h.mux)
	return h
}

// routes registers every route of the API. One registrar per file.
func (h *handler) routes(mux *http.ServeMux) {
	h.pingRoutes(mux)
	h.metricsRoutes(mux)
	h.filesRoutes(mux)
	h.commandRoutes(mux)
}

func (h *handler) pingRoutes(mux *http.ServeMux) {
	// 200 with an empty body, as observed.
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, r *http.Request) {})
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.AccessToken != "" &&
		subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(h.opts.AccessToken)) != 1 {
		WriteUnauthorized(w, TokenHeader)
		return
	}
	// The real execd answers unknown routes, wrong methods and HEAD alike
	// with a plain-text 404; ServeMux would say 405 for a wrong method and
	// let HEAD through to the GET route.
	if _, pattern := h.mux.Handler(r); pattern == "" || r.Method == http.MethodHead {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// WriteUnauthorized writes execd's token failure: 401 {"error": "..."}, no code.
func WriteUnauthorized(w http.ResponseWriter, header string) {
	writeJSON(w, http.StatusUnauthorized, map[string]string{
		"error": "Unauthorized: invalid or missing header " + header,
	})
}

// writeJSON writes v the way execd (Go, Gin) does: HTML characters escaped.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError writes execd's usual error body {"code","message"}.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]string{"code": code, "message": message})
}
