package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/osb-dev/osb/internal/server/execd"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// dataPlane serves one sandbox's ports: execd (44772), in-process port
// handlers (egress on 18080), and a reverse proxy to 127.0.0.1:port for the
// rest (sandboxes share the host network). It is reachable directly on its
// own listener (execd at /, other ports under /proxy/{port}, like execd's
// own proxy) and through the server's /sandboxes/{id}/proxy/{port} route.
type dataPlane struct {
	sb    *sandbox.Sandbox
	execd http.Handler
	ports map[int]http.Handler
	token string // required in TokenHeader when non-empty

	ln  net.Listener
	srv *http.Server
}

func (s *Server) startDataPlane(rec *record, secureAccess bool) (*dataPlane, error) {
	d := &dataPlane{sb: rec.sb, execd: execd.New(rec.sb, execd.Options{}), ports: map[int]http.Handler{}}
	for port, mk := range s.opts.PortHandlers {
		// A template sandbox has no egress sidecar (networkpolicy.go).
		if port != ExecdPort && !(port == EgressPort && rec.origin == originTemplate) {
			d.ports[port] = mk(rec.sb)
		}
	}
	if s.opts.EndpointHeaders || secureAccess {
		d.token = randomHex(16)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(s.bindHost(), "0"))
	if err != nil {
		return nil, err
	}
	d.ln = ln
	d.srv = &http.Server{Handler: d, ReadHeaderTimeout: 30 * time.Second}
	go d.srv.Serve(ln)
	return d, nil
}

// close stops the listener and cuts open connections (streams included).
func (d *dataPlane) close() { d.srv.Close() }

func (d *dataPlane) port() int { return d.ln.Addr().(*net.TCPAddr).Port }

// headers are the endpoint headers a client must send on every request.
func (d *dataPlane) headers() map[string]string {
	if d.token == "" {
		return map[string]string{}
	}
	return map[string]string{TokenHeader: d.token}
}

// ServeHTTP is the direct listener: execd at the root, /proxy/{port}/... for other ports.
func (d *dataPlane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !d.admit(w, r) {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/proxy/")
	if !ok {
		d.execd.ServeHTTP(w, r)
		return
	}
	portStr, sub, _ := strings.Cut(rest, "/")
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		http.Error(w, "port is required", http.StatusBadRequest) // as execd's proxy says
		return
	}
	d.servePort(w, r, port, "/"+sub)
}

// admit checks the endpoint token (before routing, as execd checks its
// token) and refuses paused sandboxes: their processes are stopped and
// could not answer. 409 rather than 503 so that clients do not retry.
func (d *dataPlane) admit(w http.ResponseWriter, r *http.Request) bool {
	if d.token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(d.token)) != 1 {
		execd.WriteUnauthorized(w, TokenHeader)
		return false
	}
	if d.sb.Paused() {
		writeError(w, http.StatusConflict, codeNotRunning, "Sandbox "+d.sb.ID()+" is paused; resume it first.")
		return false
	}
	return true
}

// servePort hands the request, its path replaced by path, to the port's handler.
func (d *dataPlane) servePort(w http.ResponseWriter, r *http.Request, port int, path string) {
	r = withPath(r, path)
	r.Header.Del("OPEN-SANDBOX-API-KEY") // the key must never reach the sandbox
	switch h := d.ports[port]; {
	case port == ExecdPort:
		d.execd.ServeHTTP(w, r)
	case h != nil:
		h.ServeHTTP(w, r)
	case port == EgressPort:
		writeError(w, http.StatusNotFound, codePortUnavailable, "No egress sidecar runs for this sandbox.")
	default:
		proxyTo(port).ServeHTTP(w, r)
	}
}

func withPath(r *http.Request, path string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, ""
	r2.RequestURI = ""
	return r2
}

// proxyTo forwards to a service listening on 127.0.0.1:port, WebSocket included.
func proxyTo(port int) http.Handler {
	target := &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port)}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Del(TokenHeader)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "Bad Gateway", http.StatusBadGateway) // execd's proxy answers so
		},
	}
}

// serverProxy is /sandboxes/{id}/proxy/{port}[/{rest...}] on the main listener.
func (s *Server) serverProxy(w http.ResponseWriter, r *http.Request) {
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	port, err := strconv.Atoi(r.PathValue("port"))
	if err != nil || port < 1 || port > 65535 {
		writeError(w, http.StatusBadRequest, codeInvalidParameter, "Invalid port "+r.PathValue("port")+".")
		return
	}
	if !rec.data.admit(w, r) {
		return
	}
	rec.data.servePort(w, r, port, "/"+r.PathValue("rest"))
}

// bindHost is where data-plane listeners bind: the main listener's host.
func (s *Server) bindHost() string {
	host, _, err := net.SplitHostPort(s.Addr())
	if err != nil || host == "" {
		return "127.0.0.1"
	}
	return host
}

// endpointHost is the host clients should use: the bind host, or, when
// bound to all interfaces, the host the client used to reach us.
func (s *Server) endpointHost(r *http.Request) string {
	host := s.bindHost()
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			return h
		}
		return r.Host
	}
	return host
}

func (s *Server) getEndpoint(w http.ResponseWriter, r *http.Request) {
	var v fields
	port := v.pathPort(r.PathValue("port"))
	q := r.URL.Query()
	useProxy := v.queryBool(q, "use_server_proxy")
	expires, hasExpires := q["expires"]
	if hasExpires {
		v.expiresOK(expires[0])
	}
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return
	}
	switch {
	case hasExpires && useProxy:
		writeError(w, http.StatusBadRequest, codeInvalidParameter, "use_server_proxy and expires cannot be combined.")
		return
	case hasExpires:
		writeError(w, http.StatusBadRequest, codeNotSupported, "Signed endpoints (expires) are not supported by the local server.")
		return
	}
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	if rec.origin != "" {
		w.Header().Set(originHeader, rec.origin)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"endpoint": s.endpointFor(r, rec, port, useProxy),
		"headers":  rec.data.headers(),
	})
}

// endpointFor builds the scheme-less endpoint (host:port[/path]).
func (s *Server) endpointFor(r *http.Request, rec *record, port int, useProxy bool) string {
	if useProxy {
		_, mainPort, _ := net.SplitHostPort(s.Addr())
		return fmt.Sprintf("%s/sandboxes/%s/proxy/%d", net.JoinHostPort(s.endpointHost(r), mainPort), rec.id, port)
	}
	base := net.JoinHostPort(s.endpointHost(r), strconv.Itoa(rec.data.port()))
	if port == ExecdPort {
		return base
	}
	return fmt.Sprintf("%s/proxy/%d", base, port)
}

func (v *fields) pathPort(raw string) int {
	loc := []any{"path", "port"}
	n, err := strconv.Atoi(raw)
	switch {
	case err != nil:
		v.add(typeErr(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", raw))
	case n < 1:
		v.add(detail{Type: "greater_than_equal", Loc: loc, Input: raw, Msg: "Input should be greater than or equal to 1", Ctx: map[string]any{"ge": 1}})
	case n > 65535:
		v.add(detail{Type: "less_than_equal", Loc: loc, Input: raw, Msg: "Input should be less than or equal to 65535", Ctx: map[string]any{"le": 65535}})
	}
	return n
}

// queryBool parses a boolean the way pydantic does.
func (v *fields) queryBool(q url.Values, name string) bool {
	raw, present := q[name]
	if !present {
		return false
	}
	switch strings.ToLower(raw[len(raw)-1]) {
	case "1", "true", "t", "yes", "y", "on":
		return true
	case "0", "false", "f", "no", "n", "off":
		return false
	}
	v.add(typeErr([]any{"query", name}, "bool_parsing", "Input should be a valid boolean, unable to interpret input", raw[len(raw)-1]))
	return false
}

// expiresOK checks the expires pattern (decimal epoch seconds).
func (v *fields) expiresOK(raw string) {
	ok := len(raw) >= 1 && len(raw) <= 20 && (raw == "0" || raw[0] != '0')
	for _, c := range raw {
		ok = ok && c >= '0' && c <= '9'
	}
	if !ok {
		v.add(detail{Type: "string_pattern_mismatch", Loc: []any{"query", "expires"}, Input: raw,
			Msg: "String should match pattern '^(0|[1-9][0-9]*)$'", Ctx: map[string]any{"pattern": "^(0|[1-9][0-9]*)$"}})
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
