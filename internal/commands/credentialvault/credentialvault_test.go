package credentialvault_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
)

// secret is in every payload; no output, error or log line may show it.
const secret = "sk-live-DO-NOT-LEAK-4242"

const policy = `{"defaultAction": "deny", "egress": [
  {"action": "allow", "target": "api.example.com"}, {"action": "allow", "target": "*.svc.example.com"}]}`

const vaultYAML = `# Credential Vault for the API tests
credentials:
  - name: token
    source:
      type: inline
      value: ` + secret + `
  - name: key
    source: {value: "` + secret + `-2"}
bindings:
  - name: api
    match:
      hosts: [api.example.com]
    auth: {type: bearer, credential: token}
  - name: svc
    match: {hosts: ["*.svc.example.com"], schemes: [http], methods: [GET], paths: ["/v1/*"]}
    auth: {type: apiKey, name: x-api-key, credential: key}
`

const rotateJSON = `{
	"expectedRevision": 1,
	"credentials": {"replace": [{"name": "token", "source": {"type": "inline", "value": "` + secret + `-3"}}]},
	"bindings": {"delete": ["svc"]}
}`

type fixture struct {
	t   *testing.T
	env *cmdtest.Env
	log *cmdtest.SyncBuffer
	dir string
	all []cmdtest.Result // every run, checked for the secret at the end
}

func newFixture(t *testing.T, opts ...func(*server.Options)) *fixture {
	t.Helper()
	fx := &fixture{t: t, log: &cmdtest.SyncBuffer{}, dir: t.TempDir()}
	fx.env = cmdtest.New(t, append([]func(*server.Options){func(o *server.Options) { o.NoIsolation = true; o.Log = fx.log }}, opts...)...)
	t.Cleanup(fx.checkNoSecret)
	return fx
}

// file writes a payload file and returns its path.
func (fx *fixture) file(name, content string) string {
	p := filepath.Join(fx.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		fx.t.Fatal(err)
	}
	return p
}

// sandbox creates a sandbox with the policy (and Credential Proxy unless told not to).
func (fx *fixture) sandbox(args ...string) string {
	fx.t.Helper()
	base := []string{"sandbox", "create", "-o", "json", "--network-policy-file", fx.file("policy.json", policy)}
	out := fx.env.Must(append(base, args...)...)
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == "" {
		fx.t.Fatalf("create printed no id: %v\n%s", err, out)
	}
	return v.ID
}

func (fx *fixture) run(args ...string) cmdtest.Result {
	return fx.runStdin("", args...)
}

func (fx *fixture) runStdin(stdin string, args ...string) cmdtest.Result {
	fx.t.Helper()
	r := fx.env.RunStdin(stdin, append([]string{"-v"}, args...)...)
	fx.all = append(fx.all, r)
	return r
}

func (fx *fixture) checkNoSecret() {
	for _, r := range fx.all {
		if strings.Contains(r.Stdout+r.Stderr, secret) {
			fx.t.Errorf("output shows the secret:\nstdout: %s\nstderr: %s", r.Stdout, r.Stderr)
		}
	}
	if strings.Contains(fx.log.String(), secret) {
		fx.t.Errorf("server log shows the secret:\n%s", fx.log.String())
	}
}

var (
	addrRE   = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	spacesRE = regexp.MustCompile(`(\S) {2,}`)
)

// golden compares stdout of a successful run (-v lines dropped from stderr
// are not part of it) with a golden file.
func (fx *fixture) golden(name, id string, r cmdtest.Result) {
	fx.t.Helper()
	r.ExpectCode(fx.t, 0)
	s := addrRE.ReplaceAllString(cmdtest.Normalize(r.Stdout, map[string]string{id: "<ID>"}), "<ADDR>")
	cmdtest.Golden(fx.t, name, spacesRE.ReplaceAllString(s, "$1  "))
}

// requests lists the HTTP exchanges logged under -v.
func requests(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "* ") {
			out = append(out, line)
		}
	}
	return out
}

// vault asks the sidecar directly (not through osb) for the vault state.
func (fx *fixture) vault(id string) (int, string) { return fx.vaultWith(id, true) }

// vaultWith is vault, sending the endpoint headers only when withHeaders.
func (fx *fixture) vaultWith(id string, withHeaders bool) (int, string) {
	fx.t.Helper()
	out := fx.env.Must("sandbox", "endpoint", id, "-p", "18080", "-o", "json")
	var ep struct {
		Endpoint string
		Headers  map[string]string
	}
	json.Unmarshal([]byte(out), &ep)
	req, _ := http.NewRequest("GET", "http://"+ep.Endpoint+"/credential-vault", nil)
	for k, v := range ep.Headers {
		if withHeaders {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fx.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func TestVaultVerbsInEveryFormat(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	id := fx.sandbox("-i", "python:3.11", "--credential-proxy")
	vault := fx.file("vault.yaml", vaultYAML)
	for _, format := range []string{"table", "json", "yaml"} {
		fx.golden("create_"+format, id, fx.run("credential-vault", "create", id, "--file", vault, "-o", format))
		fx.golden("get_"+format, id, fx.run("credential-vault", "get", id, "-o", format))
		fx.golden("credential_list_"+format, id, fx.run("credential-vault", "credential", "list", id, "-o", format))
		fx.golden("credential_get_"+format, id, fx.run("credential-vault", "credential", "get", id, "token", "-o", format))
		fx.golden("binding_list_"+format, id, fx.run("credential-vault", "binding", "list", id, "-o", format))
		fx.golden("binding_get_"+format, id, fx.run("credential-vault", "binding", "get", id, "svc", "-o", format))
		fx.golden("patch_"+format, id, fx.runStdin(rotateJSON, "credential-vault", "patch", id, "--file", "-", "-o", format))
		fx.golden("delete_"+format, id, fx.run("credential-vault", "delete", id, "-o", format))
		if status, body := fx.vault(id); status != 404 {
			t.Fatalf("after delete the vault is %d %s", status, body)
		}
	}
	// A unique id prefix works too.
	fx.run("credential-vault", "create", id[:8], "--file", vault).ExpectCode(t, 0)
	if status, _ := fx.vault(id); status != 200 {
		t.Errorf("create by prefix: vault %d", status)
	}
}

func TestVaultBadPayloadSendsNothing(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	id := fx.sandbox("-i", "python:3.11", "--credential-proxy")
	fx.run("credential-vault", "create", id, "--file", fx.file("vault.yaml", vaultYAML)).ExpectCode(t, 0)
	_, before := fx.vault(id)
	missing := filepath.Join(fx.dir, "nope.yaml")
	cases := []struct {
		verb, payload, msg string
	}{
		{"create", "<missing>", "Error: Payload file not found: " + missing + "\n"},
		{"create", "<dir>", "Error: Payload file not found: " + fx.dir + "\n"},
		{"create", "credentials: [\n  - name: a\n    source: {value: \"" + secret + "\"\n", "Error: Failed to read credential vault payload from <FILE>: not valid JSON or YAML (line 3).\n"},
		{"create", "credentials: []\nbindings: []\ncredentials:\n  - {name: a, source: {value: " + secret + "}}\n", "Error: Failed to read credential vault payload from <FILE>: not valid JSON or YAML (line 3).\n"},
		{"create", "credentials:\n\t- {name: a, source: {value: " + secret + "}}\n", "Error: Failed to read credential vault payload from <FILE>: not valid JSON or YAML (line 2).\n"},
		// Trailing junk after a JSON object is refused, not silently dropped.
		{"create", `{"credentials": [], "bindings": []} }`, "Error: Failed to read credential vault payload from <FILE>: not valid JSON or YAML (line 1).\n"},
		{"create", "", "Error: Credential vault payload must be a JSON/YAML object.\n"},
		{"create", "[1, 2]", "Error: Credential vault payload must be a JSON/YAML object.\n"},
		{"create", `{"credentials": []}`, "Error: Credential vault payload field 'bindings' must be a list.\n"},
		{"create", `{"credentials": {}, "bindings": []}`, "Error: Credential vault payload field 'credentials' must be a list.\n"},
		{"create", `{"credentials": [], "bindings": [], "revision": 1}`, "Error: Invalid credential vault payload: unknown field 'revision' (allowed: credentials, bindings).\n"},
		{"create", `{"credentials": [{"name": " ", "source": {"value": "` + secret + `"}}], "bindings": []}`, "Error: Invalid credential vault payload: credentials[0].name: must be a non-blank string.\n"},
		{"create", `{"credentials": [{"name": "a", "source": {"value": ""}}], "bindings": []}`, "Error: Invalid credential vault payload: credentials[0].source.value: must be a non-empty string.\n"},
		{"create", "credentials:\n- name: a\n  source: {value: 424242424242}\nbindings: []\n", "Error: Invalid credential vault payload: credentials[0].source.value: must be a non-empty string.\n"},
		{"create", `{"credentials": [{"name": "a", "source": {"type": "vault", "value": "` + secret + `"}}], "bindings": []}`, "Error: Invalid credential vault payload: credentials[0].source.type: must be 'inline'.\n"},
		{"create", `{"credentials": [{"name": "a", "source": {"valeu": "` + secret + `"}}], "bindings": []}`, "Error: Invalid credential vault payload: credentials[0].source: unknown field 'valeu' (allowed: type, value).\n"},
		{"create", `{"credentials": [{"name": "a", "source": "` + secret + `"}], "bindings": []}`, "Error: Invalid credential vault payload: credentials[0].source: must be an object.\n"},
		{"create", `{"credentials": [], "bindings": [{"name": "b", "match": {"hosts": []}, "auth": {"type": "bearer"}}]}`, "Error: Invalid credential vault payload: bindings[0].match.hosts: must be a non-empty list of host names.\n"},
		{"create", `{"credentials": [], "bindings": [{"name": "b", "match": {"hosts": ["a.com"], "schemes": ["ftp"]}, "auth": {"type": "bearer"}}]}`, "Error: Invalid credential vault payload: bindings[0].match.schemes[0]: must be 'https' or 'http'.\n"},
		{"create", `{"credentials": [], "bindings": [{"name": "b", "match": {"hosts": ["a.com"], "ports": ["443"]}, "auth": {"type": "bearer"}}]}`, "Error: Invalid credential vault payload: bindings[0].match.ports[0]: must be an integer.\n"},
		{"create", `{"credentials": [], "bindings": [{"name": "b", "match": {"hosts": ["a.com"]}, "auth": {"type": "digest"}}]}`, "Error: Invalid credential vault payload: bindings[0].auth.type: must be one of bearer, basic, apiKey, customHeaders, passthrough.\n"},
		{"create", `{"credentials": [], "bindings": [{"name": "b", "match": {"hosts": ["a.com"]}}]}`, "Error: Invalid credential vault payload: bindings[0].auth: must be an object.\n"},
		{"patch", `{}`, "Error: Credential vault patch payload must include credentials or bindings.\n"},
		{"patch", `{"credentials": []}`, "Error: Credential vault patch field 'credentials' must be an object.\n"},
		{"patch", `{"expectedRevision": "1", "bindings": {"delete": ["svc"]}}`, "Error: Credential vault expectedRevision must be an integer.\n"},
		{"patch", "expected_revision: 1.0\nbindings: {delete: [svc]}\n", "Error: Credential vault expectedRevision must be an integer.\n"},
		{"patch", `{"expectedRevision": true, "bindings": {"delete": ["svc"]}}`, "Error: Credential vault expectedRevision must be an integer.\n"},
		{"patch", `{"credentials": {"rotate": []}}`, "Error: Invalid credential vault payload: credentials: unknown field 'rotate' (allowed: add, replace, delete).\n"},
		{"patch", `{"credentials": {"replace": [{"name": "token", "source": {"value": 7}}]}}`, "Error: Invalid credential vault payload: credentials.replace[0].source.value: must be a non-empty string.\n"},
		{"patch", `{"bindings": {"delete": [""]}}`, "Error: Invalid credential vault payload: bindings.delete[0]: must not be blank.\n"},
	}
	for i, c := range cases {
		path := fx.file("bad.txt", c.payload)
		switch c.payload {
		case "<missing>":
			path = missing
		case "<dir>":
			path = fx.dir
		}
		want := strings.ReplaceAll(c.msg, "<FILE>", path)
		for _, viaStdin := range []bool{false, true} {
			if viaStdin && strings.HasPrefix(c.payload, "<") {
				continue
			}
			var r cmdtest.Result
			if viaStdin {
				r = fx.runStdin(c.payload, "credential-vault", c.verb, id, "--file", "-")
				want = strings.ReplaceAll(c.msg, "<FILE>", "-")
			} else {
				r = fx.run("credential-vault", c.verb, id, "--file", path)
			}
			r.ExpectCode(t, 2)
			if !strings.Contains(r.Stderr, want) || r.Stdout != "" {
				t.Errorf("case %d (stdin %v): stderr %q, want %q", i, viaStdin, r.Stderr, want)
			}
			if reqs := requests(r.Stderr); len(reqs) > 0 {
				t.Errorf("case %d sent requests: %v", i, reqs)
			}
		}
	}
	r := fx.run("credential-vault", "create", id).ExpectCode(t, 2)
	if !strings.Contains(r.Stderr, `required flag(s) "file" not set`) {
		t.Errorf("no --file: %q", r.Stderr)
	}
	if _, after := fx.vault(id); after != before {
		t.Errorf("vault changed:\n%s\n%s", before, after)
	}
}

func TestVaultServerErrors(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	id := fx.sandbox("-i", "python:3.11", "--credential-proxy")
	vault := fx.file("vault.yaml", vaultYAML)
	expect := func(code int, msg string, args ...string) cmdtest.Result {
		t.Helper()
		r := fx.run(args...).ExpectCode(t, code)
		if !strings.Contains(r.Stderr, msg) || r.Stdout != "" {
			t.Errorf("%v: stdout %q stderr %q, want %q", args, r.Stdout, r.Stderr, msg)
		}
		return r
	}
	expect(4, "Error: credential vault not found (HTTP 404", "credential-vault", "get", id)
	expect(4, "HTTP 404", "credential-vault", "binding", "list", id)
	expect(4, "HTTP 404", "credential-vault", "delete", id)
	expect(4, "Sandbox 0123456789abcdef not found.", "credential-vault", "get", "0123456789abcdef")
	uncovered := fx.file("uncovered.json", `{"credentials": [{"name": "t", "source": {"value": "`+secret+`"}}],
		"bindings": [{"name": "b", "match": {"hosts": ["evil.org"]}, "auth": {"type": "bearer", "credential": "t"}}]}`)
	expect(1, `Error: binding "b" host "evil.org" is not covered by an explicit allow egress rule (HTTP 400`, "credential-vault", "create", id, "--file", uncovered)
	fx.run("credential-vault", "create", id, "--file", vault).ExpectCode(t, 0)
	expect(1, "Error: credential vault already exists (HTTP 409", "credential-vault", "create", id, "--file", vault)
	rotate := fx.file("rotate.json", rotateJSON)
	fx.run("credential-vault", "patch", id, "--file", rotate).ExpectCode(t, 0)
	r := expect(1, "expectedRevision 1 does not match current revision 2", "credential-vault", "patch", id, "--file", rotate, "-o", "json")
	var e struct {
		ExitCode   int `json:"exit_code"`
		HTTPStatus int `json:"http_status"`
	}
	if err := json.Unmarshal([]byte(r.Stderr[strings.Index(r.Stderr, "{"):]), &e); err != nil || e.HTTPStatus != 409 || e.ExitCode != 1 {
		t.Errorf("409 under -o json: %q", r.Stderr)
	}
	expect(4, "credential not found (HTTP 404", "credential-vault", "credential", "get", id, "nope")
	expect(4, "binding not found (HTTP 404", "credential-vault", "binding", "get", id, "svc")

	// Without Credential Proxy at create, the sidecar refuses (412).
	plain := fx.sandbox("-i", "python:3.11")
	expect(1, "credential vault requires Credential Proxy", "credential-vault", "create", plain, "--file", vault)
}

func TestVaultOfTemplateSandboxIsUnsupported(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	id := fx.sandbox("--template", fx.env.Template("python:3.11"), "-t", "10m")
	vault := fx.file("vault.yaml", vaultYAML)
	for _, args := range [][]string{
		{"credential-vault", "create", id, "--file", vault},
		{"credential-vault", "get", id},
		{"credential-vault", "credential", "list", id},
		{"credential-vault", "binding", "get", id, "api"},
	} {
		r := fx.run(args...).ExpectCode(t, 1)
		want := "Error: Credential Vault needs the sandbox's egress sidecar, and sandbox " + id + " was created from a template, which has none.\n"
		if !strings.HasSuffix(r.Stderr, want) {
			t.Errorf("%v: %q", args, r.Stderr)
		}
		if reqs := requests(r.Stderr); len(reqs) != 1 || !strings.Contains(reqs[0], "/endpoints/44772") {
			t.Errorf("%v requests %v", args, reqs)
		}
	}
}

func TestVaultThroughEndpointHeadersAndProxy(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	id := fx.sandbox("-i", "python:3.11", "--credential-proxy")
	vault := fx.file("vault.yaml", vaultYAML)
	fx.run("credential-vault", "create", id, "--file", vault).ExpectCode(t, 0)
	r := fx.runStdin(rotateJSON, "--use-server-proxy", "credential-vault", "patch", id, "--file", "-", "-o", "json").ExpectCode(t, 0)
	reqs := requests(r.Stderr)
	if len(reqs) != 3 || !strings.Contains(reqs[2], "* PATCH http://"+fx.env.Server.Addr()+"/sandboxes/"+id+"/proxy/18080/credential-vault") {
		t.Errorf("requests %v", reqs)
	}
	if !strings.Contains(r.Stdout, `"revision": 2`) {
		t.Errorf("patch through the proxy: %s", r.Stdout)
	}
	out := fx.run("--use-server-proxy", "credential-vault", "credential", "list", id, "-o", "json").ExpectCode(t, 0).Stdout
	if !strings.Contains(out, `"name": "token"`) {
		t.Errorf("list through the proxy: %s", out)
	}
	// The sidecar itself refuses callers without the endpoint's token.
	if status, _ := fx.vaultWith(id, false); status != 401 {
		t.Errorf("vault without the endpoint token: %d", status)
	}
}
