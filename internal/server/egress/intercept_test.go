//go:build linux

package egress_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server/egress"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// tlsUpstream is a loopback HTTPS server standing in for outside hosts,
// with a certificate for them from its own test root.
type tlsUpstream struct {
	srv  *httptest.Server
	cert *x509.Certificate
	mu   sync.Mutex
	seen []string // "METHOD path host=<Host> auth=<Authorization>"
}

func newTLSUpstream(t *testing.T, hosts ...string) (*tlsUpstream, *x509.CertPool) {
	u := &tlsUpstream{}
	u.srv, u.cert = servertest.TLSUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, fmt.Sprintf("%s %s host=%s auth=%s", r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("Authorization")))
		u.mu.Unlock()
		fmt.Fprintf(w, "%s over %s", r.Host, r.Proto)
	}), hosts...)
	u.srv.EnableHTTP2 = true // what a blind tunnel lets the client use
	u.srv.StartTLS()
	roots := x509.NewCertPool()
	roots.AddCert(u.cert)
	return u, roots
}

func (u *tlsUpstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// TestProxyInjectsVaultCredentialsIntoHTTPS: a CONNECT to a host with an
// https binding is intercepted with a certificate from the server's CA and
// its requests get the credentials; other tunnels stay blind.
func TestProxyInjectsVaultCredentialsIntoHTTPS(t *testing.T) {
	up, upRoots := newTLSUpstream(t, "api.example.test", "plain.example.test", "denied.example.test")
	addr := up.srv.Listener.Addr().String()
	network := fakeNet{"api.example.test:443": addr, "plain.example.test:443": addr, "denied.example.test:443": addr}
	policy := egress.Policy{DefaultAction: egress.Deny, Egress: []egress.Rule{
		{Action: egress.Allow, Target: "api.example.test"}, {Action: egress.Allow, Target: "plain.example.test"}}}
	var logMu sync.Mutex
	var logged []string
	sc := egress.New(nil, egress.Options{Policy: &policy, CredentialProxy: true, Log: func(f string, a ...any) {
		logMu.Lock()
		logged = append(logged, fmt.Sprintf(f, a...))
		logMu.Unlock()
	}})
	sidecarAPI := httptest.NewServer(sc)
	defer sidecarAPI.Close()
	s := &sidecar{t: t, url: sidecarAPI.URL}
	s.expect(201, "POST", "/credential-vault", `{"credentials":[{"name":"token","source":{"type":"inline","value":"`+secret+`"}}],
	"bindings":[{"name":"api","match":{"hosts":["api.example.test"],"paths":["/v1/*"]},"auth":{"type":"bearer","credential":"token"}}]}`)

	ca, err := egress.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	proxy := sc.NewProxy(network.dial)
	proxy.InterceptWith(ca, upRoots)
	_, proxyAddr := proxyFor(t, proxy)

	// The client trusts the server's CA and the upstream's own root, as a
	// sandbox trusts the CA and the system's roots; it offers h2 too.
	clientRoots := x509.NewCertPool()
	clientRoots.AppendCertsFromPEM(ca.PEM())
	clientRoots.AddCert(up.cert)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		Proxy:             http.ProxyURL(&url.URL{Scheme: "http", Host: proxyAddr}),
		TLSClientConfig:   &tls.Config{RootCAs: clientRoots},
		ForceAttemptHTTP2: true,
	}}
	block, _ := pem.Decode(ca.PEM())
	fetch := func(rawURL string) (body string, issuer []byte) {
		t.Helper()
		resp, err := client.Get(rawURL)
		if err != nil {
			t.Fatalf("GET %s: %v", rawURL, err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		chain := resp.TLS.VerifiedChains[0]
		return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Proto, b.String()), chain[len(chain)-1].Raw
	}

	body, root := fetch("https://api.example.test/v1/models")
	if body != "200 HTTP/1.1 api.example.test over HTTP/1.1" || !bytes.Equal(root, block.Bytes) {
		t.Errorf("bound host: %q, chain to the server CA: %v", body, bytes.Equal(root, block.Bytes))
	}
	body, root = fetch("https://api.example.test/health") // intercepted, outside the binding's paths
	if body != "200 HTTP/1.1 api.example.test over HTTP/1.1" || !bytes.Equal(root, block.Bytes) {
		t.Errorf("bound host, unbound path: %q", body)
	}
	body, root = fetch("https://plain.example.test/v1/models")
	if body != "200 HTTP/2.0 plain.example.test over HTTP/2.0" || !bytes.Equal(root, up.cert.Raw) {
		t.Errorf("unbound host: %q, the upstream's own certificate: %v", body, bytes.Equal(root, up.cert.Raw))
	}
	want := []string{
		"GET /v1/models host=api.example.test auth=Bearer " + secret,
		"GET /health host=api.example.test auth=",
		"GET /v1/models host=plain.example.test auth=",
	}
	if got := up.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("upstream saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The policy still decides (the vault only binds allowed hosts).
	// An intercepted tunnel opens with a bare 200 too (connect checks it).
	if status, tun := connect(t, proxyAddr, "api.example.test:443"); tun == nil || status != "200 Connection established" {
		t.Errorf("CONNECT to a bound host: %s", status)
	} else {
		tun.Close()
	}
	if status, tun := connect(t, proxyAddr, "denied.example.test:443"); tun != nil || status != "403 Forbidden" {
		t.Errorf("CONNECT to a denied host: %s", status)
	}
	if n := len(up.requests()); n != 3 {
		t.Errorf("denied hosts reached the upstream: %v", up.requests())
	}
	logMu.Lock()
	defer logMu.Unlock()
	if all := strings.Join(logged, "\n"); strings.Contains(all, secret) || !strings.Contains(all, "credential binding api applied to GET api.example.test") {
		t.Errorf("log:\n%s", all)
	}
}

// The proxy verifies the real host: with roots that do not vouch for its
// certificate, nothing is sent there, credentials least of all.
func TestProxyInterceptionVerifiesTheUpstream(t *testing.T) {
	up, _ := newTLSUpstream(t, "api.example.test")
	network := fakeNet{"api.example.test:443": up.srv.Listener.Addr().String()}
	policy := egress.Policy{DefaultAction: egress.Deny, Egress: []egress.Rule{{Action: egress.Allow, Target: "api.example.test"}}}
	sc := egress.New(nil, egress.Options{Policy: &policy, CredentialProxy: true})
	sidecarAPI := httptest.NewServer(sc)
	defer sidecarAPI.Close()
	(&sidecar{t: t, url: sidecarAPI.URL}).expect(201, "POST", "/credential-vault", `{"credentials":[{"name":"token","source":{"type":"inline","value":"`+secret+`"}}],
	"bindings":[{"name":"api","match":{"hosts":["api.example.test"]},"auth":{"type":"bearer","credential":"token"}}]}`)
	ca, err := egress.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	proxy := sc.NewProxy(network.dial)
	proxy.InterceptWith(ca, x509.NewCertPool()) // trusts nothing
	_, proxyAddr := proxyFor(t, proxy)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM())
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxyAddr}), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	status, body := get(t, client, "GET", "https://api.example.test/v1", "")
	if status != 502 || body != "osb egress proxy: cannot reach the destination\n" {
		t.Errorf("unverifiable upstream: %d %q", status, body)
	}
	if got := up.requests(); len(got) != 0 {
		t.Errorf("the unverified upstream got %v", got)
	}
}
