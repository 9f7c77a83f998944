//go:build linux

package egress_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/server/egress"
	"github.com/osb-dev/osb/internal/server/nullcheck"
)

const secret = "sk-live-DO-NOT-LEAK-4242"

// sidecar serves a sidecar over HTTP and records its log lines.
type sidecar struct {
	t   *testing.T
	url string
	mu  sync.Mutex
	log []string
}

func start(t *testing.T, opts egress.Options) *sidecar {
	s := &sidecar{t: t}
	opts.Log = func(format string, args ...any) {
		s.mu.Lock()
		s.log = append(s.log, fmt.Sprintf(format, args...))
		s.mu.Unlock()
	}
	srv := httptest.NewServer(egress.New(nil, opts))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

type reply struct {
	status int
	ctype  string
	body   string
}

func (s *sidecar) do(method, path, body string) reply {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(b), secret) {
		s.t.Fatalf("%s %s answered with the secret: %s", method, path, b)
	}
	if nulls := nullcheck.Paths(b); strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && len(nulls) > 0 {
		s.t.Errorf("%s %s answered null at %v", method, path, nulls)
	}
	return reply{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

// expect checks the status and returns the body.
func (s *sidecar) expect(status int, method, path, body string) string {
	s.t.Helper()
	r := s.do(method, path, body)
	if r.status != status {
		s.t.Fatalf("%s %s: %d %q, want %d", method, path, r.status, r.body, status)
	}
	return r.body
}

// expectText checks an error: status, text/plain, and the message in it.
func (s *sidecar) expectText(status int, method, path, body, msg string) {
	s.t.Helper()
	r := s.do(method, path, body)
	if r.status != status || !strings.HasPrefix(r.ctype, "text/plain") || !strings.Contains(r.body, msg) {
		s.t.Errorf("%s %s %s: %d %s %q, want %d text/plain with %q", method, path, body, r.status, r.ctype, r.body, status, msg)
	}
}

func TestPolicyAPI(t *testing.T) {
	s := start(t, egress.Options{})
	const allowAll = `{"status":"ok","mode":"allow_all","enforcementMode":"none","reason":"` + egress.NotEnforced + `","policy":{"defaultAction":"allow","egress":[]}}`
	if got := s.expect(200, "GET", "/policy", ""); strings.TrimSpace(got) != allowAll {
		t.Errorf("initial policy %s", got)
	}
	s.expect(200, "PUT", "/policy", `{"defaultAction":"deny","egress":[{"action":"allow","target":"a.com"}]}`)
	got := s.expect(200, "PATCH", "/policy", `[{"action":"deny","target":"x.com"},{"action":"allow","target":"x.com"},{"action":"deny","target":"A.com"}]`)
	if strings.Contains(got, `"policy"`) || !strings.Contains(got, `"mode":"enforcing"`) || !strings.Contains(got, `"enforcementMode":"none"`) {
		t.Errorf("patch answer %s", got)
	}
	want := `{"defaultAction":"deny","egress":[{"action":"deny","target":"x.com"},{"action":"deny","target":"A.com"}]}`
	if got := policyOf(t, s.expect(200, "GET", "/policy", "")); got != want {
		t.Errorf("after patch %s\nwant %s", got, want)
	}
	s.expect(200, "DELETE", "/policy", `["X.COM"]`)
	if got := s.expect(200, "DELETE", "/policy", `["x.com","nope.org"]`); !strings.Contains(got, "no matching targets found") {
		t.Errorf("idempotent delete %s", got)
	}
	if got := policyOf(t, s.expect(200, "GET", "/policy", "")); got != `{"defaultAction":"deny","egress":[{"action":"deny","target":"A.com"}]}` {
		t.Errorf("after delete %s", got)
	}
	s.expect(200, "POST", "/policy", "")
	if got := policyOf(t, s.expect(200, "GET", "/policy", "")); got != `{"defaultAction":"deny","egress":[]}` {
		t.Errorf("after reset %s", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.log) != 4 || !strings.Contains(s.log[0], "not enforced") {
		t.Errorf("log lines %q", s.log)
	}
}

func policyOf(t *testing.T, body string) string {
	var st struct{ Policy json.RawMessage }
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return string(st.Policy)
}

func TestPolicyErrors(t *testing.T) {
	p := egress.Policy{DefaultAction: egress.Deny, Egress: []egress.Rule{{Action: egress.Allow, Target: "a.com"}}}
	s := start(t, egress.Options{Policy: &p})
	for _, c := range []struct{ method, body, msg string }{
		{"PATCH", "", "empty body"},
		{"PATCH", "[]", "invalid patch rules: empty array"},
		{"PATCH", `{"action":"allow"}`, "invalid patch rules"},
		{"PATCH", `[{"action":"maybe","target":"b.com"}]`, `unsupported action "maybe"`},
		{"PATCH", `[{"action":"allow","target":" "}]`, "target cannot be empty"},
		{"PATCH", `[{"action":"allow","target":"b.com","port":1}]`, `unknown field "port"`},
		{"PATCH", `[{"action":"allow",`, "malformed JSON"},
		{"DELETE", "", "empty body"},
		{"DELETE", "[]", "invalid delete targets: empty array"},
		{"DELETE", `[1]`, "expected a string"},
		{"PUT", `{"defaultAction":"block"}`, "invalid policy"},
	} {
		s.expectText(400, c.method, "/policy", c.body, c.msg)
	}
	s.expectText(405, "HEAD2", "/policy", "", "")
	s.expectText(404, "GET", "/nope", "", "404 page not found")
	if got := policyOf(t, s.expect(200, "GET", "/policy", "")); got != `{"defaultAction":"deny","egress":[{"action":"allow","target":"a.com"}]}` {
		t.Errorf("a failed change altered the policy: %s", got)
	}
}

// vaultPolicy allows api.example.com and *.svc.example.com, denies the rest.
var vaultPolicy = egress.Policy{DefaultAction: egress.Deny, Egress: []egress.Rule{
	{Action: egress.Allow, Target: "api.example.com"}, {Action: egress.Allow, Target: "*.svc.example.com"},
}}

const vaultBody = `{"credentials":[{"name":"token","source":{"type":"inline","value":"` + secret + `"}},
 {"name":"key","source":{"value":"` + secret + `-2"}}],
 "bindings":[{"name":"api","match":{"hosts":["API.example.com."]},"auth":{"type":"bearer","credential":"token"}},
  {"name":"svc","match":{"hosts":["*.svc.example.com"],"schemes":["http"],"methods":["get"],"paths":["/v1/*"],"ports":[80]},
   "auth":{"type":"apiKey","name":"x-api-key","credential":"key"}}]}`

func TestCredentialVaultLifecycle(t *testing.T) {
	p := vaultPolicy
	s := start(t, egress.Options{Policy: &p, CredentialProxy: true})
	s.expectText(404, "GET", "/credential-vault", "", "credential vault not found")
	s.expectText(404, "GET", "/credential-vault/credentials", "", "credential vault not found")
	created := s.expect(201, "POST", "/credential-vault", vaultBody)
	want := `{"revision":1,"credentials":[{"name":"key","sourceType":"inline","revision":1},{"name":"token","sourceType":"inline","revision":1}],` +
		`"bindings":[{"name":"api","revision":1,"match":{"schemes":["https"],"hosts":["api.example.com"],"methods":["GET","POST","PUT","PATCH","DELETE"],"paths":["/*"]},"auth":{"type":"bearer"}},` +
		`{"name":"svc","revision":1,"match":{"schemes":["http"],"ports":[80],"hosts":["*.svc.example.com"],"methods":["GET"],"paths":["/v1/*"]},"auth":{"type":"apiKey","name":"X-Api-Key"}}]}`
	if strings.TrimSpace(created) != want {
		t.Errorf("created\n%s\nwant\n%s", created, want)
	}
	if got := s.expect(200, "GET", "/credential-vault", ""); got != created {
		t.Errorf("get %s", got)
	}
	s.expectText(409, "POST", "/credential-vault", vaultBody, "already exists")
	if got := s.expect(200, "GET", "/credential-vault/credentials", ""); !strings.HasPrefix(got, `{"revision":1,"credentials":[{"name":"key"`) {
		t.Errorf("credentials %s", got)
	}
	if got := s.expect(200, "GET", "/credential-vault/credentials/token", ""); strings.TrimSpace(got) != `{"name":"token","sourceType":"inline","revision":1}` {
		t.Errorf("credential %s", got)
	}
	s.expectText(404, "GET", "/credential-vault/credentials/nope", "", "credential not found")
	if got := s.expect(200, "GET", "/credential-vault/bindings/svc", ""); !strings.Contains(got, `"auth":{"type":"apiKey","name":"X-Api-Key"}`) {
		t.Errorf("binding %s", got)
	}
	s.expectText(404, "GET", "/credential-vault/bindings/nope", "", "binding not found")
	if got := s.expect(200, "GET", "/credential-vault/bindings", ""); !strings.HasPrefix(got, `{"revision":1,"bindings":[{"name":"api"`) {
		t.Errorf("bindings %s", got)
	}

	// Rotating a credential bumps the vault and that credential only.
	rotate := `{"expectedRevision":1,"credentials":{"replace":[{"name":"token","source":{"type":"inline","value":"` + secret + `-3"}}]}}`
	patched := s.expect(200, "PATCH", "/credential-vault", rotate)
	if !strings.Contains(patched, `"revision":2,"credentials":[{"name":"key","sourceType":"inline","revision":1},{"name":"token","sourceType":"inline","revision":2}]`) {
		t.Errorf("patched %s", patched)
	}
	s.expectText(409, "PATCH", "/credential-vault", rotate, "expectedRevision 1 does not match current revision 2")
	for _, c := range []struct{ body, msg string }{
		{`{"credentials":{"delete":["token"]}}`, `binding "api" references unknown credential "token"`},
		{`{"credentials":{"delete":["nope"]}}`, `credential "nope" does not exist`},
		{`{"credentials":{"add":[{"name":"key","source":{"value":"v"}}]}}`, `credential "key" already exists`},
		{`{"credentials":{"delete":["key"],"add":[{"name":"key","source":{"value":"v"}}]}}`, "named by more than one operation"},
		{`{"bindings":{"add":[{"name":"other","match":{"hosts":["evil.org"]},"auth":{"type":"bearer","credential":"key"}}]}}`, `host "evil.org" is not covered by an explicit allow egress rule`},
		{`{"bindings":{"add":[{"name":"dup","match":{"hosts":["api.example.com"],"paths":["/x"]},"auth":{"type":"basic","credential":"key"}}]}}`, `bindings "api" and "dup" can match the same request`},
		{`{"bindings":{"replace":[{"name":"api","match":{"hosts":["api.example.com"]},"auth":{"type":"apiKey","name":"Host","credential":"key"}}]}}`, `header "Host" cannot carry a credential`},
		{`{"bindings":{"replace":[{"name":"api","match":{"hosts":["10.0.0.1"]},"auth":{"type":"bearer","credential":"key"}}]}}`, "not an IP address"},
		{`{"bindings":{"replace":[{"name":"api","match":{"hosts":["api.example.com"],"ports":[8443]},"auth":{"type":"bearer","credential":"key"}}]}}`, "port 8443 is not supported"},
		{`{"bindings":{"replace":[{"name":"api","match":{"hosts":["api.example.com"]},"auth":{"type":"digest"}}]}}`, `unsupported auth type "digest"`},
		{`{"expectedRevision":"2"}`, "expectedRevision: expected an integer"},
		{`{"nonsense":true}`, `unknown field "nonsense"`},
	} {
		s.expectText(400, "PATCH", "/credential-vault", c.body, c.msg)
	}
	if got := s.expect(200, "GET", "/credential-vault", ""); got != patched {
		t.Errorf("a failed patch changed the vault: %s", got)
	}

	// The policy cannot drop an allow rule a binding relies on.
	s.expectText(400, "DELETE", "/policy", `["api.example.com"]`, `credential vault policy validation: binding "api" host "api.example.com" is not covered`)
	s.expect(200, "PATCH", "/policy", `[{"action":"deny","target":"other.org"}]`)

	s.expect(204, "DELETE", "/credential-vault", "")
	s.expectText(404, "DELETE", "/credential-vault", "", "credential vault not found")
	s.expectText(404, "PATCH", "/credential-vault", rotate, "credential vault not found")
	// Credentials and bindings may be null or missing: none.
	for _, body := range []string{`{"credentials":[],"bindings":[]}`, `{"credentials":null,"bindings":null}`, `{}`} {
		if got := s.expect(201, "POST", "/credential-vault", body); strings.TrimSpace(got) != `{"revision":1,"credentials":[],"bindings":[]}` {
			t.Errorf("create from %s: %s", body, got)
		}
		s.expect(204, "DELETE", "/credential-vault", "")
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range s.log {
		if strings.Contains(line, secret) {
			t.Errorf("log line carries the secret: %s", line)
		}
	}
	if len(s.log) < 3 || !strings.Contains(strings.Join(s.log, "\n"), "credential vault created (revision 1, 2 credential(s), 2 binding(s))") {
		t.Errorf("log %q", s.log)
	}
}

func TestCredentialVaultPreconditions(t *testing.T) {
	s := start(t, egress.Options{}) // no credentialProxy
	s.expectText(412, "POST", "/credential-vault", vaultBody, "requires Credential Proxy")
	s.expectText(412, "DELETE", "/credential-vault", "", "requires Credential Proxy")
	s.expectText(404, "GET", "/credential-vault", "", "not found")

	s = start(t, egress.Options{CredentialProxy: true}) // allow-all, no rules
	s.expectText(400, "POST", "/credential-vault", vaultBody, "credential bindings require explicit networkPolicy.egress allow rules")
	for _, c := range []struct{ body, msg string }{
		{`{"credentials":[{"name":" ","source":{"value":"x"}}],"bindings":[]}`, "credential name cannot be blank"},
		{`{"credentials":[{"name":"a","source":{"value":""}}],"bindings":[]}`, `credential "a": inline value cannot be empty`},
		{`{"credentials":[{"name":"a","source":{"type":"vault","value":"x"}}],"bindings":[]}`, "unsupported source type"},
		{`{"credentials":[{"name":"a","source":{"value":"x"}},{"name":"a","source":{"value":"y"}}],"bindings":[]}`, `duplicate credential name "a"`},
		{`{"credentials":[{"name":"a","source":{"value":` + "\"" + secret + "\"" + `,"extra":1}}],"bindings":[]}`, `unknown field "extra"`},
		{`{"credentials":[{"name":"a","source":{"value":` + secret + `}}],"bindings":[]}`, "malformed JSON at byte"},
	} {
		s.expectText(400, "POST", "/credential-vault", c.body, c.msg)
	}
}
