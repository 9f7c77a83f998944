package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// ProxyEnforcement is the enforcementMode a sidecar reports once its
// sandbox's only way out is the egress proxy.
const ProxyEnforcement = "proxy"

// DialFunc opens a connection to the outside world for the proxy.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Proxy is a sandbox's HTTP egress proxy: it forwards plain HTTP requests
// (absolute-form) and opens CONNECT tunnels, each to a host the sidecar's
// live policy allows, so that a policy change applies to the next request.
// Requests matching a Credential Vault binding get its credentials: plain
// HTTP ones as they pass, HTTPS ones by intercepting the tunnel (intercept.go)
// when its host:port has an https binding. Other tunnels are passed
// through unread.
type Proxy struct {
	sc   *Sidecar
	dial DialFunc
	http *http.Transport

	once sync.Once
	ln   *connListener
	srv  *http.Server

	// Interception (intercept.go); nil ca: every tunnel is blind.
	ca       *CA
	https    *http.Transport
	mitmOnce sync.Once
	mitmLn   *connListener
	mitmSrv  *http.Server

	mu      sync.Mutex
	tunnels map[net.Conn]bool // both ends of every open CONNECT tunnel; Close cuts them
	closed  bool
	open    atomic.Int64 // connections from the sandbox being served (MaxConns)
}

// NewProxy returns the egress proxy of the sidecar's sandbox. dial reaches
// the outside world; nil means PublicDial.
func (s *Sidecar) NewProxy(dial DialFunc) *Proxy {
	if dial == nil {
		dial = PublicDial
	}
	p := &Proxy{sc: s, dial: dial, ln: newConnListener(), mitmLn: newConnListener(), tunnels: map[net.Conn]bool{}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: maxHeaderBytes}
	p.mitmSrv = &http.Server{Handler: http.HandlerFunc(p.serveIntercepted), ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, ConnContext: tunnelContext, MaxHeaderBytes: maxHeaderBytes}
	p.http = &http.Transport{
		DialContext:            dial,
		Proxy:                  nil, // never chain to the server's own proxy settings
		ResponseHeaderTimeout:  5 * time.Minute,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConns:           maxIdleUpstream,
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
	return p
}

// What one connection through the proxy may make the server hold outside
// the sandbox's cgroup, so that MaxConns bounds a sandbox's cost: headers
// of at most maxHeaderBytes each way (net/http's defaults, 1 MiB in and
// 10 MiB back, would let 256 connections hold gigabytes), and at most
// maxIdleUpstream upstream connections kept for reuse (net/http keeps two
// per host, without bound across hosts).
const (
	maxHeaderBytes  = 32 << 10
	maxIdleUpstream = 16
)

// MaxConns is how many connections one sandbox may have open to its egress
// proxy at once: plain HTTP, tunnels (intercepted or not) and idle ones
// alike. Each holds buffers and goroutines in the server, outside the
// sandbox's memory limit, so the count is what bounds what one sandbox
// costs the server (about 100 KiB a connection at most). A variable so
// that tests can lower it.
var MaxConns = 256

// ServeConn serves one connection from inside the sandbox; it returns at
// once. This is what a listener on ProxyPort in the sandbox's network hands
// its connections to. A connection beyond MaxConns is answered 503 and
// closed; the sandbox's others, and other sandboxes, go on.
func (p *Proxy) ServeConn(c net.Conn) {
	if !p.admit() {
		p.sc.log("sandbox %s: egress connection refused: %d open, the limit", p.sc.id, MaxConns)
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"+
			"osb egress proxy: this sandbox has %d connections open through the proxy, its limit; close some first\n", MaxConns)
		c.Close()
		return
	}
	p.once.Do(func() { go p.srv.Serve(p.ln) })
	p.ln.push(&countedConn{Conn: c, release: p.release}) // closes c once the proxy is closed
}

// admit counts a new connection, unless MaxConns are open.
func (p *Proxy) admit() bool {
	for {
		n := p.open.Load()
		if n >= int64(MaxConns) {
			return false
		}
		if p.open.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release is called when a connection closes, maybe under p.mu (Close).
func (p *Proxy) release() { p.open.Add(-1) }

// countedConn gives its place back when it is first closed (by the HTTP
// server, or by a tunnel that took it over).
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// Close stops serving and cuts the open connections and tunnels.
func (p *Proxy) Close() error {
	p.ln.Close()
	p.mitmLn.Close()
	p.mitmSrv.Close()
	p.http.CloseIdleConnections()
	if p.https != nil {
		p.https.CloseIdleConnections()
	}
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	return p.srv.Close()
}

// track registers the ends of a tunnel (false: the proxy is closed, and
// they have been closed); untrack forgets them.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		if p.closed {
			c.Close()
		} else {
			p.tunnels[c] = true
		}
	}
	return !p.closed
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.tunnels, c)
	}
}

// ServeHTTP is the proxy itself.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "osb egress proxy: send absolute http:// URLs, or CONNECT for https", http.StatusBadRequest)
		return
	}
	p.relay(w, r, p.http)
}

// relay checks r (absolute-form, scheme http or https) against the live
// policy, adds the credentials of its binding and forwards it over rt.
func (p *Proxy) relay(w http.ResponseWriter, r *http.Request, rt http.RoundTripper) {
	host := canonicalHost(r.URL.Hostname())
	if !p.allowed(w, host) {
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Host = hostPort(host, r.URL.Port()) // what was decided is what is dialled
	removeHopHeaders(out.Header)
	if err := p.sc.inject(out); err != nil {
		http.Error(w, "osb egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := rt.RoundTrip(out)
	if err != nil {
		dialFailed(w, err)
		return
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	copyFlushing(w, resp.Body)
}

// hostPort joins a canonical host and a port, which may be empty.
func hostPort(host, port string) string {
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// allowed applies the live policy to host (canonicalHost), answering 403
// when it denies.
func (p *Proxy) allowed(w http.ResponseWriter, host string) bool {
	if p.sc.Policy().Decide(host) == Allow {
		return true
	}
	p.sc.log("sandbox %s: egress to %s denied by policy", p.sc.id, host)
	http.Error(w, "osb egress proxy: egress to "+host+" is denied by the sandbox's network policy", http.StatusForbidden)
	return false
}

// tunnel is CONNECT host:port: a byte pipe to an allowed host.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" {
		http.Error(w, "osb egress proxy: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	host = canonicalHost(host)
	target := net.JoinHostPort(host, port)
	if !p.allowed(w, host) {
		return
	}
	if p.intercepts(host, port) {
		p.intercept(w, target)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	upstream, err := p.dial(ctx, "tcp", target)
	cancel()
	if err != nil {
		dialFailed(w, err)
		return
	}
	client, buf, err := established(w)
	if err != nil {
		upstream.Close()
		return
	}
	if !p.track(client, upstream) {
		return
	}
	defer p.untrack(client, upstream)
	// Bytes the client sent after its CONNECT request are already buffered.
	if n := buf.Reader.Buffered(); n > 0 {
		early, _ := buf.Reader.Peek(n)
		upstream.Write(early)
	}
	splice(client, upstream)
}

// established answers a CONNECT with a bare 200 and hands over the
// connection. The answer is written on the hijacked connection itself:
// net/http would add Transfer-Encoding: chunked to a 200 without a length,
// which a 2xx answer to CONNECT must not carry (RFC 9110, 9.3.6), and
// strict clients then refuse the tunnel.
func established(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, buf, nil
}

// splice copies both ways until either side ends, then closes both.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}

func copyFlushing(w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// hopHeaders are meant for one connection and not forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopHeaders(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// PublicDial dials like net.Dialer but refuses every address of this host
// and its links (checkDestination), checked on the address each connection
// is made to, after name resolution: a sandbox must not reach the host's
// own services (or a cloud metadata endpoint) through the proxy, whatever
// name it uses, and a name that resolves differently the second time
// cannot slip past a check made the first time.
func PublicDial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		return checkDestination(ap.Addr())
	}}
	return d.DialContext(ctx, network, addr)
}

// dialFailed answers a request whose destination could not be reached: 403
// with the reason when the proxy refused the address, 502 otherwise.
func dialFailed(w http.ResponseWriter, err error) {
	var refused *refusedAddress
	if errors.As(err, &refused) {
		http.Error(w, "osb egress proxy: "+refused.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, "osb egress proxy: cannot reach the destination", http.StatusBadGateway)
}

// inject adds the credentials of the Credential Vault binding that matches
// a request (plain HTTP, or HTTPS inside an intercepted tunnel), if any. Exact host matches take precedence over
// wildcard ones; the vault refuses overlapping bindings of one kind.
func (s *Sidecar) inject(r *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vault == nil {
		return nil
	}
	b, ok := s.vault.bindingFor(r)
	if !ok {
		return nil
	}
	value := func(name string) string { return s.vault.credentials[name].value }
	switch a := b.Auth; a.Type {
	case "bearer":
		r.Header.Set("Authorization", "Bearer "+value(a.Credential))
	case "basic":
		r.Header.Set("Authorization", "Basic "+value(a.Credential))
	case "apiKey":
		r.Header.Set(a.Name, value(a.Credential))
	case "customHeaders":
		for _, h := range a.Headers {
			r.Header.Set(h.Name, value(h.Credential))
		}
	}
	for _, sub := range b.Auth.Substitutions {
		if err := substitute(r, sub.Placeholder, value(sub.Credential), sub.In); err != nil {
			return err
		}
	}
	s.log("sandbox %s: credential binding %s applied to %s %s", s.id, b.Name, r.Method, r.URL.Host)
	return nil
}

// bindingFor is the binding matching r: exact hosts first, then wildcards.
func (v *vault) bindingFor(r *http.Request) (bindingIn, bool) {
	host := strings.ToLower(strings.TrimSuffix(r.URL.Hostname(), "."))
	var wild *bindingIn
	for _, sb := range v.bindings {
		b := sb.b
		exact, wildcard := hostKinds(b.Match.Hosts, host)
		if !(exact || wildcard) || !requestMatches(b.Match, r) {
			continue
		}
		if exact {
			return b, true
		}
		wild = &b
	}
	if wild != nil {
		return *wild, true
	}
	return bindingIn{}, false
}

// hostKinds says whether host is named exactly, or under a wildcard.
func hostKinds(hosts []string, host string) (exact, wildcard bool) {
	for _, h := range hosts {
		if h == host {
			exact = true
		} else if strings.HasPrefix(h, "*.") && hostMatches(host, h) {
			wildcard = true
		}
	}
	return exact, wildcard
}

// schemePorts is the port each binding scheme implies.
var schemePorts = map[string]string{"http": "80", "https": "443"}

// requestMatches checks scheme, method, port and path of a request: plain
// HTTP, or HTTPS read inside an intercepted tunnel.
func requestMatches(m Match, r *http.Request) bool {
	scheme, port := r.URL.Scheme, r.URL.Port()
	if port == "" {
		port = schemePorts[scheme]
	}
	if !contains(m.Schemes, scheme) || !contains(m.Methods, r.Method) || port != schemePorts[scheme] {
		return false
	}
	for _, pattern := range m.Paths {
		if prefix, ok := strings.CutSuffix(pattern, "*"); ok && strings.HasPrefix(r.URL.Path, prefix) || pattern == r.URL.Path {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// substitute replaces placeholder with value in the parts of r named by in.
func substitute(r *http.Request, placeholder, value string, in []string) error {
	for _, where := range in {
		switch where {
		case "path":
			r.URL.Path = strings.ReplaceAll(r.URL.Path, placeholder, value)
			r.URL.RawPath = ""
		case "query":
			q := r.URL.Query()
			for k, vs := range q {
				for i := range vs {
					vs[i] = strings.ReplaceAll(vs[i], placeholder, value)
				}
				q[k] = vs
			}
			r.URL.RawQuery = q.Encode()
		case "header":
			for _, vs := range r.Header {
				for i := range vs {
					vs[i] = strings.ReplaceAll(vs[i], placeholder, value)
				}
			}
		case "body":
			if err := substituteBody(r, placeholder, value); err != nil {
				return err
			}
		}
	}
	return nil
}

func substituteBody(r *http.Request, placeholder, value string) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	if err != nil {
		return errors.New("cannot read the request body")
	}
	if len(raw) > maxBody {
		return errors.New("request body too large for credential substitution (1 MiB at most)")
	}
	raw = bytes.ReplaceAll(raw, []byte(placeholder), []byte(value))
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))
	r.Header.Set("Content-Length", strconv.Itoa(len(raw)))
	return nil
}

// connListener is a net.Listener fed connections one by one (ServeConn).
type connListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return proxyAddr{} }

type proxyAddr struct{}

func (proxyAddr) Network() string { return "tcp" }
func (proxyAddr) String() string  { return sandbox.EgressProxyAddr }
