package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strings"
	"time"
)

// InterceptWith lets the proxy read HTTPS to hosts with a Credential Vault
// binding, so that their credentials are injected there too: it presents a
// certificate for the host signed by ca (which the sandbox trusts) and
// forwards each request over TLS to the real host, verified against roots
// (nil: the system's). Call it before the proxy serves anything.
func (p *Proxy) InterceptWith(ca *CA, roots *x509.CertPool) {
	p.ca = ca
	p.https = &http.Transport{
		DialContext:            p.dial,
		Proxy:                  nil, // never chain to the server's own proxy settings
		TLSClientConfig:        &tls.Config{RootCAs: roots, NextProtos: []string{"http/1.1"}},
		TLSHandshakeTimeout:    30 * time.Second,
		ResponseHeaderTimeout:  5 * time.Minute,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConns:           maxIdleUpstream,
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
}

// intercepts reports whether a CONNECT to host:port is read rather than
// passed through: some https binding of the vault names host (https
// implies port 443).
func (p *Proxy) intercepts(host, port string) bool {
	if p.ca == nil || port != schemePorts["https"] {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	s := p.sc
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vault == nil {
		return false
	}
	for _, sb := range s.vault.bindings {
		exact, wildcard := hostKinds(sb.b.Match.Hosts, host)
		if (exact || wildcard) && contains(sb.b.Match.Schemes, "https") {
			return true
		}
	}
	return false
}

// intercept answers a CONNECT to target (host:443) and terminates the TLS
// inside it; the HTTP/1.1 requests that follow go to serveIntercepted.
func (p *Proxy) intercept(w http.ResponseWriter, target string) {
	host, _, _ := net.SplitHostPort(target)
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	cert, err := p.ca.leaf(host)
	if err != nil {
		http.Error(w, "osb egress proxy: cannot make a certificate for "+host, http.StatusInternalServerError)
		return
	}
	client, buf, err := established(w)
	if err != nil {
		return
	}
	var c net.Conn = client
	if buf.Reader.Buffered() > 0 { // the ClientHello may have come with the CONNECT
		c = &bufferedConn{Conn: client, r: buf.Reader}
	}
	tc := tls.Server(c, &tls.Config{
		Certificates: []tls.Certificate{*cert},
		NextProtos:   []string{"http/1.1"}, // requests are read as HTTP/1.1 only
		MinVersion:   tls.VersionTLS12,
	})
	tc.SetDeadline(time.Now().Add(30 * time.Second))
	if err := tc.Handshake(); err != nil {
		p.sc.log("sandbox %s: TLS with the client for %s failed (does it trust the server's CA?): %v", p.sc.id, host, err)
		tc.Close()
		return
	}
	tc.SetDeadline(time.Time{})
	p.mitmOnce.Do(func() { go p.mitmSrv.Serve(p.mitmLn) })
	p.mitmLn.push(&tunnelConn{Conn: tc, target: target}) // closed with the proxy
}

// serveIntercepted handles one request read inside an intercepted tunnel:
// whatever its own URL or Host say, it goes to the tunnel's host, under
// the live policy and with the credentials of the binding it matches.
func (p *Proxy) serveIntercepted(w http.ResponseWriter, r *http.Request) {
	target, _ := r.Context().Value(tunnelTarget{}).(string)
	host, _, _ := net.SplitHostPort(target)
	r.URL.Scheme, r.URL.Host, r.Host = "https", host, host
	p.relay(w, r, p.https)
}

// tunnelConn is the client side of an intercepted tunnel, after TLS.
type tunnelConn struct {
	net.Conn
	target string // host:port of the CONNECT
}

type tunnelTarget struct{}

// tunnelContext hands each intercepted connection's target to its requests.
func tunnelContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tunnelConn); ok {
		return context.WithValue(ctx, tunnelTarget{}, tc.target)
	}
	return ctx
}

// bufferedConn reads what a bufio.Reader holds before the connection itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }
