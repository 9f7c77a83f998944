package faults

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdtest"
)

// attacker is a server on loopback that a hostile or broken server
// redirects to. It answers everything and logs what it was sent.
func attacker(t *testing.T) *fake {
	a := newFake(t)
	a.handle("/", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.log = append(a.log, "headers "+fmt.Sprint(r.Header))
		a.mu.Unlock()
		writeJSON(w, 200, map[string]any{"id": "sb-1", "status": map[string]string{"state": "Running"}})
	})
	return a
}

func redirect(to string, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, status)
	}
}

// A lifecycle server that redirects a call to another origin does not get
// the API key sent there: whatever the status and the method, osb refuses
// with one line (exit 1), and the other server hears nothing.
func TestRedirectToAnotherOriginKeepsTheKey(t *testing.T) {
	t.Parallel()
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			f, evil := newFake(t), attacker(t)
			to := "http://" + evil.addr() + "/steal"
			f.handle("GET /v1/sandboxes/{id}", redirect(to, status))
			f.handle("POST /v1/sandboxes/{id}/pause", redirect(to, status))
			env := f.env()
			from := "http://" + f.addr() + "/v1/sandboxes/sb-1"
			why := "osb did not follow: it leads to another origin, and the credentials are only for http://" + f.addr()
			r := env.Run("sandbox", "get", "sb-1")
			expect(t, r, 1, fmt.Sprintf("Error: the server redirected GET %s to %s (HTTP %d); %s", from, to, status, why))
			oneLine(t, r)
			r = env.Run("sandbox", "pause", "sb-1", "-o", "json")
			expect(t, r, 1)
			if !strings.Contains(r.Stderr, fmt.Sprintf(`"message": "the server redirected POST %s/pause to %s (HTTP %d); %s"`, from, to, status, why)) || r.Stdout != "" {
				t.Errorf("-o json: stdout %q stderr %s", r.Stdout, r.Stderr)
			}
			if got := evil.requests(); len(got) != 0 {
				t.Errorf("the other origin was sent %v", got)
			}
		})
	}
}

// From https to http is a downgrade even on the same host: the key would
// travel in clear text.
func TestRedirectFromHTTPSToHTTP(t *testing.T) {
	t.Parallel()
	evil := attacker(t)
	tls := httptest.NewTLSServer(redirect("http://"+evil.addr()+"/v1/sandboxes/sb-1", http.StatusFound))
	t.Cleanup(tls.Close)
	env := newFake(t).env()
	env.Vars["OPEN_SANDBOX_DOMAIN"] = tls.URL
	env.ClientOptions = func(o *client.Options) { o.HTTPClient = tls.Client() }
	r := env.Run("sandbox", "get", "sb-1")
	expect(t, r, 1, "Error: the server redirected GET "+tls.URL+"/v1/sandboxes/sb-1 to http://"+evil.addr()+"/v1/sandboxes/sb-1 (HTTP 302); osb did not follow: it leads from https to http, and the credentials would travel in clear text")
	if got := evil.requests(); len(got) != 0 {
		t.Errorf("the http server was sent %v", got)
	}
}

// A redirect within the server's own origin is followed, key and all, when
// it repeats the request; one that would turn a POST into a GET is not.
func TestRedirectWithinTheOrigin(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("GET /v1/sandboxes/{id}", redirect("/v1/moved/sb-1", http.StatusMovedPermanently))
	f.handle("GET /v1/moved/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(client.HeaderAPIKey) != apiKey {
			writeJSON(w, 401, map[string]string{"code": "INVALID_API_KEY", "message": "no key"})
			return
		}
		writeJSON(w, 200, map[string]any{"id": "sb-1", "status": map[string]string{"state": "Running"}, "entrypoint": []string{"tail"}})
	})
	f.handle("POST /v1/sandboxes/{id}/pause", redirect("/v1/moved/sb-1", http.StatusFound))
	env := f.env()
	if r := env.Run("sandbox", "get", "sb-1", "-o", "json"); r.Code != 0 || !strings.Contains(r.Stdout, `"id": "sb-1"`) {
		t.Errorf("exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	expect(t, env.Run("sandbox", "pause", "sb-1"), 1, "(HTTP 302); osb did not follow: it would turn the POST into a GET")
}

// A sandbox's data plane gets the endpoint's headers, and the credential
// vault its secrets; redirected elsewhere, neither goes along.
func TestRedirectOfTheDataPlaneKeepsHeadersAndSecrets(t *testing.T) {
	t.Parallel()
	f, evil := newFake(t), attacker(t)
	f.handle("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"endpoint": f.addr() + "/sb/" + r.PathValue("id"),
			"headers": map[string]string{"OpenSandbox-Secure-Access": "gate-secret"}})
	})
	f.handle("POST /sb/{id}/command", redirect("http://"+evil.addr()+"/command", http.StatusTemporaryRedirect))
	f.handle("POST /sb/{id}/credential-vault", redirect("http://"+evil.addr()+"/credential-vault", http.StatusPermanentRedirect))
	env := f.env()
	r := env.Run("command", "run", "sb-1", "--", "echo", "hi")
	expect(t, r, 125, "Error: the server redirected POST http://"+f.addr()+"/sb/sb-1/command to http://"+evil.addr()+"/command (HTTP 307)", "another origin")
	vault := filepath.Join(t.TempDir(), "vault.json")
	os.WriteFile(vault, []byte(`{"credentials":[{"name":"token","source":{"type":"inline","value":"vault-secret"}}],"bindings":[]}`), 0o600)
	r = env.Run("credential-vault", "create", "sb-1", "--file", vault)
	expect(t, r, 1, "Error: the server redirected POST http://"+f.addr()+"/sb/sb-1/credential-vault to http://"+evil.addr()+"/credential-vault (HTTP 308)")
	if got := evil.requests(); len(got) != 0 {
		t.Errorf("the other origin was sent %v", got)
	}
}

// oneLine fails unless stderr is one line and stdout empty.
func oneLine(t *testing.T, r cmdtest.Result) {
	t.Helper()
	if r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("want one line on stderr and nothing on stdout, got stdout %q stderr %q", r.Stdout, r.Stderr)
	}
}

// A domain with a password never shows it: not in "cannot reach", not in
// a timeout, not in a server error, not in the -v log.
func TestPasswordInTheDomainIsNeverShown(t *testing.T) {
	t.Parallel()
	const password = "pa55-w0rd"
	f := newFake(t)
	f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.PathValue("id") == "slow" {
			<-r.Context().Done()
			return
		}
		writeJSON(w, 500, map[string]string{"code": "BOOM", "message": "it broke"})
	})
	env := f.env()
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "http://admin:" + password + "@" + f.addr()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-v", "sandbox", "get", "sb-1"}, 1},
		{[]string{"--request-timeout", "1", "sandbox", "get", "slow"}, 5},
		{[]string{"--domain", "http://admin:" + password + "@" + strings.TrimPrefix(closed.URL, "http://"), "sandbox", "get", "sb-1"}, 6},
		{[]string{"--domain", "http://admin:" + password + "@" + f.addr() + "/?x", "sandbox", "list"}, 2},
		{[]string{"--domain", "ftp://admin:" + password + "@host", "sandbox", "list", "-o", "json"}, 2},
	} {
		r := env.Run(tc.args...)
		if r.Code != tc.code || strings.Contains(r.Stdout+r.Stderr, password) || !strings.Contains(r.Stderr, "admin:xxxxx@") {
			t.Errorf("%v: exit %d (want %d)\nstdout %q\nstderr %q", tc.args, r.Code, tc.code, r.Stdout, r.Stderr)
		}
	}
}
