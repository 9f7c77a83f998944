//go:build linux

package server_test

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// TestHTTPSCredentialsFromInsideASandbox: curl in an isolated sandbox
// reaches an HTTPS host with a vault binding through the egress proxy,
// which intercepts it with a certificate the sandbox trusts and adds the
// credential; HTTPS to an unbound host is tunnelled untouched. "Outside"
// is one loopback TLS server of this test, reached by name through the
// server's EgressDial and trusted through EgressRoots.
func TestHTTPSCredentialsFromInsideASandbox(t *testing.T) {
	t.Parallel()
	const token = "sk-inside-DO-NOT-LEAK-77"
	var mu sync.Mutex
	var seen []string
	outside, cert := servertest.TLSUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s auth=%s", r.Host, r.URL.Path, r.Header.Get("Authorization")))
		mu.Unlock()
		fmt.Fprintf(w, "hello from %s", r.Host)
	}), "api.example.test", "plain.example.test")
	outside.StartTLS()
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	dial := exampleDial(443, outside)
	c := newClient(t, func(o *server.Options) { o.EgressDial, o.EgressRoots = dial, roots })
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	id := c.create(map[string]any{"credentialProxy": map[string]any{"enabled": true},
		"networkPolicy": map[string]any{"defaultAction": "deny", "egress": []map[string]string{
			{"action": "allow", "target": "api.example.test"}, {"action": "allow", "target": "plain.example.test"}}}})
	e := c.endpoint(id, server.EgressPort, false)
	c.expect(201, c.do("POST", "http://"+e.Endpoint+"/credential-vault", `{"credentials":[{"name":"token","source":{"type":"inline","value":"`+token+`"}}],
		"bindings":[{"name":"api","match":{"hosts":["api.example.test"]},"auth":{"type":"bearer","credential":"token"}}]}`))

	curl := func(args string) string {
		t.Helper()
		out, _ := c.sh(id, "curl -s -m 60 -w ' %{http_code}' "+args+"; echo \" $?\"")
		return strings.TrimSpace(out)
	}
	// The sandbox trusts the proxy's CA by default.
	if got := curl("https://api.example.test/v1/models"); got != "hello from api.example.test 200 0" {
		t.Errorf("bound host: %q", got)
	}
	// Trusting only the outside server's own root shows who answered TLS:
	// the proxy for the bound host, the real server for the unbound one.
	rootPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	c.sh(id, "printf '%s' '"+string(rootPEM)+"' > /tmp/outside-root.pem")
	if got := curl("--cacert /tmp/outside-root.pem https://plain.example.test/x"); got != "hello from plain.example.test 200 0" {
		t.Errorf("unbound host, blind tunnel: %q", got)
	}
	if got := curl("--cacert /tmp/outside-root.pem https://api.example.test/v1/models"); got != "000 60" {
		t.Errorf("bound host seen with the outside root only: %q (want curl's certificate error 60)", got)
	}
	if got := curl("-o /dev/null https://denied.example.test/"); got != "000 56" {
		t.Errorf("denied host: %q", got)
	}
	// A sandbox without credentialProxy does not trust the egress CA: its
	// bundle holds one certificate less.
	plain := c.create(map[string]any{"networkPolicy": map[string]any{"defaultAction": "deny"}})
	count := "grep -c 'BEGIN CERTIFICATE' $SSL_CERT_FILE"
	with, _ := c.sh(id, count)
	without, _ := c.sh(plain, count)
	if n, m := atoiOr0(with), atoiOr0(without); n != m+1 {
		t.Errorf("certificates in the bundle: %q with credentialProxy, %q without", with, without)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "api.example.test /v1/models auth=Bearer " + token + "\nplain.example.test /x auth="
	if got := strings.Join(seen, "\n"); got != want {
		t.Errorf("outside saw\n%s\nwant\n%s", got, want)
	}
}

func atoiOr0(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}
