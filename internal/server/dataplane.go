package server

import (
	"context"
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

	"github.com/osb-dev/osb/internal/server/egress"
	"github.com/osb-dev/osb/internal/server/execd"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// dataPlane serves one sandbox's ports: execd (44772), in-process port
// handlers (egress on 18080), and a reverse proxy to the sandbox's own
// listeners for the rest. It has no listener of its own: every request
// arrives through the main listener's /sandboxes/{id}/proxy/{port} route,
// which is also the endpoint the lifecycle API hands out, so nothing of a
// sandbox is reachable without the API key or the sandbox's secret.
type dataPlane struct {
	sb     *sandbox.Sandbox
	execd  http.Handler
	ports  map[int]http.Handler
	secret string // the SecureAccessHeader value this sandbox's endpoints carry

	// egress is the sandbox's egress proxy; nil without the local sidecar.
	egress *egress.Proxy
	// intent holds a template sandbox's policy for its egress proxy: such a
	// sandbox has no sidecar port, its policy is the lifecycle server's.
	intent *egress.Sidecar

	// done is cancelled by close: it ends the requests still running
	// (streams, WebSockets) when the sandbox goes away.
	done   context.Context
	cancel context.CancelFunc
}

func (s *Server) startDataPlane(rec *record) *dataPlane {
	d := &dataPlane{sb: rec.sb, execd: s.execdFor(rec), ports: map[int]http.Handler{}, secret: randomHex(32)}
	for port, mk := range s.opts.PortHandlers {
		// A template sandbox has no egress sidecar (networkpolicy.go).
		if port != ExecdPort && !(port == EgressPort && rec.origin == originTemplate) {
			d.ports[port] = mk(rec.sb)
		}
	}
	sc, ok := d.ports[EgressPort].(*egress.Sidecar)
	if _, local := s.opts.PortHandlers[EgressPort]; !ok && local && rec.origin == originTemplate {
		sc, ok = egress.New(rec.sb, egress.Options{Log: s.log.event}), true
		d.intent = sc
	}
	if ok {
		d.egress = sc.NewProxy(s.opts.EgressDial)
		d.egress.InterceptWith(s.egressCA, s.opts.EgressRoots)
	}
	d.done, d.cancel = context.WithCancel(context.Background())
	return d
}

// close ends the requests in flight (streams and egress tunnels included).
func (d *dataPlane) close() {
	d.cancel()
	if d.egress != nil {
		d.egress.Close()
	}
}

// enforceEgress is for the runtime: once a sandbox's only way out is
// sandbox.EgressProxyAddr in its own network, the runtime hands each
// connection there to the returned function (startEgress). Calling it
// marks the sandbox's policy enforced in every policy answer. nil: the
// sandbox has no local sidecar.
func (d *dataPlane) enforceEgress() func(net.Conn) {
	sc, ok := d.ports[EgressPort].(*egress.Sidecar)
	if !ok {
		sc = d.intent
	}
	if sc == nil || d.egress == nil {
		return nil
	}
	sc.SetEnforcement(egress.ProxyEnforcement)
	return d.egress.ServeConn
}

// endpointHeaders are the headers a client must send on every request to
// the data plane: the sandbox's secret, or none on a server without a key (authorize
// admits every request there, as the real server's Docker runtime does).
func (s *Server) endpointHeaders(d *dataPlane) map[string]string {
	if s.opts.APIKey == "" {
		return map[string]string{}
	}
	return map[string]string{SecureAccessHeader: d.secret}
}

// admit refuses paused sandboxes, whose processes are stopped and could not
// answer, and sandboxes whose entrypoint has ended, whose execd a real
// deployment stops with the container. 409 rather than 503 so that
// clients do not retry.
func (d *dataPlane) admit(w http.ResponseWriter) bool {
	if d.sb.Paused() {
		writeError(w, http.StatusConflict, codeNotRunning, "Sandbox "+d.sb.ID()+" is paused; resume it first.")
		return false
	}
	if code, ended := d.sb.EntrypointEnded(); ended {
		writeError(w, http.StatusConflict, codeNotRunning,
			fmt.Sprintf("Sandbox %s is not running: its entrypoint exited with code %d.", d.sb.ID(), code))
		return false
	}
	return true
}

// servePort hands the request, its path replaced by path, to the port's handler.
func (d *dataPlane) servePort(w http.ResponseWriter, r *http.Request, port int, path string) {
	r = withPath(r, path)
	// Neither credential may reach the sandbox.
	r.Header.Del(apiKeyHeader)
	r.Header.Del(SecureAccessHeader)
	switch h := d.ports[port]; {
	case port == ExecdPort:
		d.execd.ServeHTTP(w, r)
	case h != nil:
		h.ServeHTTP(w, r)
	case port == EgressPort:
		writeError(w, http.StatusNotFound, codePortUnavailable, "No egress sidecar runs for this sandbox.")
	case !d.ownsPort(port):
		// What a sandbox with its own network would answer: nothing of
		// its own listens there (execd's proxy says so with a 502).
		http.Error(w, "Bad Gateway", http.StatusBadGateway)
	default:
		proxyTo(d.sb, port).ServeHTTP(w, r)
	}
}

// ownsPort reports whether one of the sandbox's processes listens on port.
// Sandboxes share the host's network, so 127.0.0.1:port may as well be
// another sandbox or a host service; those are never proxied to.
func (d *dataPlane) ownsPort(port int) bool {
	return d.sb.Isolated() || listensOn(d.sb.PIDs(), port) // isolated: its network is its own
}

func withPath(r *http.Request, path string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, ""
	r2.RequestURI = ""
	return r2
}

// proxyTo forwards to a service listening on 127.0.0.1:port of the
// sandbox's network, WebSocket included, each write flushed as it comes.
func proxyTo(sb *sandbox.Sandbox, port int) http.Handler {
	target := &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port)}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:     &http.Transport{DialContext: sb.DialContext, DisableKeepAlives: true, DisableCompression: true},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "Bad Gateway", http.StatusBadGateway) // execd's proxy answers so
		},
	}
	return execd.FullDuplex(proxy) // a service may answer before it has read the whole body
}

// serverProxy is /sandboxes/{id}/proxy/{port}[/{rest...}] on the main
// listener: the whole data plane. The lifecycle auth middleware lets it
// through; it checks its own credentials (authorize).
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
	if !s.authorize(w, r, rec) || !rec.data.admit(w) {
		return
	}
	s.renewOnAccess(rec)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(rec.data.done, cancel)()
	rec.data.servePort(w, r.WithContext(ctx), port, "/"+r.PathValue("rest"))
}

// authorize admits a data-plane request that carries the server's API key
// or this sandbox's secret. A wrong key is refused even with a good
// secret: the client meant the key. Errors have execd's {"error"} shape,
// as execd's own token check answers. A server without a key (--no-auth,
// loopback only) admits everything: its lifecycle API is open to the same
// clients, and the real server's Docker runtime hands out endpoints that
// need no credential, so clients that send only their own headers work.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, rec *record) bool {
	if s.opts.APIKey == "" {
		return true
	}
	if key := r.Header.Get(apiKeyHeader); key != "" && s.opts.APIKey != "" {
		if equalSecret(key, s.opts.APIKey) {
			return true
		}
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized: invalid " + apiKeyHeader})
		return false
	}
	switch secret := r.Header.Get(SecureAccessHeader); {
	case secret == "":
		execd.WriteUnauthorized(w, SecureAccessHeader)
		return false
	case !equalSecret(secret, rec.data.secret):
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "Forbidden: the " + SecureAccessHeader + " header is not this sandbox's"})
		return false
	}
	return true
}

func equalSecret(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// bindHost is the main listener's host.
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
		"endpoint": s.endpointFor(r, rec, port),
		"headers":  s.endpointHeaders(rec.data),
	})
}

// endpointFor builds the scheme-less endpoint host:port/sandboxes/{id}/proxy/{port}:
// the data plane lives on the main listener, with or without
// use_server_proxy. Like a bridge-mode server's, it ends in /proxy/{port},
// so clients must join paths onto it, never replace them.
func (s *Server) endpointFor(r *http.Request, rec *record, port int) string {
	_, mainPort, _ := net.SplitHostPort(s.Addr())
	return fmt.Sprintf("%s/sandboxes/%s/proxy/%d", net.JoinHostPort(s.endpointHost(r), mainPort), rec.id, port)
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

// renewExtendKey is the create extension that opts a sandbox into
// renew-on-access: each data-plane request pushes expiresAt to at least
// now + that many seconds (300 to 86400).
const renewExtendKey = "access.renew.extend.seconds"

// renewExtension reads renewExtendKey from the create extensions: 0 when
// absent, an error message when invalid.
func renewExtension(ext map[string]string) (time.Duration, string) {
	raw, ok := ext[renewExtendKey]
	if !ok {
		return 0, ""
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 300 || n > 86400 || raw != strconv.Itoa(n) {
		return 0, fmt.Sprintf("Invalid extensions.%s %q: a whole number of seconds from 300 to 86400.", renewExtendKey, raw)
	}
	return time.Duration(n) * time.Second, ""
}

// renewOnAccess moves expiresAt forward for a sandbox that asked for it.
// The expiry timer re-arms itself when it finds expiresAt moved (expire).
func (s *Server) renewOnAccess(rec *record) {
	if rec.renewExtend == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec.expiresAt == nil || rec.state == stateStopping {
		return
	}
	if at := time.Now().Add(rec.renewExtend).UTC(); at.After(*rec.expiresAt) {
		rec.expiresAt = &at
	}
}
