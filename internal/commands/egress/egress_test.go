package egress_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

const startPolicy = `{"defaultAction": "deny", "egress": [{"action": "allow", "target": "pypi.org"}]}`

func newEnv(t *testing.T, opts ...func(*server.Options)) *cmdtest.Env {
	t.Helper()
	return cmdtest.New(t, append([]func(*server.Options){servertest.NoIsolation}, opts...)...)
}

// create makes a sandbox with the start policy and returns its id.
func create(t *testing.T, env *cmdtest.Env, args ...string) string {
	t.Helper()
	policy := cmdtest.WriteFile(t, "policy.json", startPolicy)
	out := env.Must(append([]string{"sandbox", "create", "-o", "json", "--network-policy-file", policy}, args...)...)
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == "" {
		t.Fatalf("create printed no id: %v\n%s", err, out)
	}
	return v.ID
}

func image(t *testing.T, env *cmdtest.Env) string { return create(t, env, "-i", "python:3.11") }

var (
	addrRE   = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	spacesRE = regexp.MustCompile(`(\S) {2,}`)
)

// norm makes output stable: the id, addresses, times; runs of spaces in
// tables (their width follows the id's).
func norm(s, id string) string {
	s = addrRE.ReplaceAllString(cmdtest.Normalize(s, map[string]string{id: "<ID>"}), "<ADDR>")
	return spacesRE.ReplaceAllString(s, "$1  ")
}

// golden compares stdout and stderr of a successful run with a golden file.
func golden(t *testing.T, name, id string, r cmdtest.Result) {
	t.Helper()
	r.ExpectCode(t, 0)
	cmdtest.Golden(t, name, norm(r.Combined(), id))
}

// policy asks the server directly (not through osb) for a sandbox's policy.
func policy(t *testing.T, env *cmdtest.Env, id string) string {
	t.Helper()
	var st struct{ Policy json.RawMessage }
	env.APIGet("/sandboxes/"+id+"/networkpolicy", &st)
	return string(st.Policy)
}

// requests lists the HTTP exchanges osb logged under -v.
func requests(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "* ") {
			out = append(out, line)
		}
	}
	return out
}

func TestEgressVerbsInEveryFormat(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := image(t, env)
	for _, format := range []string{"table", "json", "yaml"} {
		golden(t, "get_"+format, id, env.Run("egress", "get", id, "-o", format))
	}
	golden(t, "patch_table", id, env.Run("egress", "patch", id, "--rule", " ALLOW = files.pythonhosted.org ", "--rule", "deny=pypi.org"))
	golden(t, "get_patched_json", id, env.Run("egress", "get", id, "-o", "json"))
	golden(t, "patch_json", id, env.Run("egress", "patch", id, "--rule", "allow=*.pythonhosted.org", "-o", "json"))
	golden(t, "patch_yaml", id, env.Run("egress", "patch", id, "--rule", "deny=example.com", "-o", "yaml"))
	golden(t, "delete_table", id, env.Run("egress", "delete", id, "--target", "example.com", "--target", "*.pythonhosted.org"))
	golden(t, "delete_json", id, env.Run("egress", "delete", id, "--target", "example.com", "-o", "json"))
	golden(t, "delete_yaml", id, env.Run("egress", "delete", id, "--target", "pypi.org", "-o", "yaml"))
	if got := policy(t, env, id); got != `{"defaultAction":"deny","egress":[{"action":"allow","target":"files.pythonhosted.org"}]}` {
		t.Errorf("policy on the server %s", got)
	}
	// Any unique prefix of the id works.
	if out := env.Must("egress", "get", id[:10], "-o", "json"); !strings.Contains(out, "files.pythonhosted.org") {
		t.Errorf("prefix get: %s", out)
	}
}

func TestEgressBadInputSendsNothing(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := image(t, env)
	before := policy(t, env, id)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"egress", "patch", id}, `required flag(s) "rule" not set`},
		{[]string{"egress", "patch", id, "--rule", "pypi.org"}, "Error: Invalid rule 'pypi.org'. Use ACTION=TARGET, for example allow=pypi.org.\n"},
		{[]string{"egress", "patch", id, "--rule", "allow=a.org", "--rule", " Block =pypi.org"}, "Error: Invalid rule action 'block'. Use allow or deny.\n"},
		{[]string{"egress", "patch", id, "--rule", "allow="}, "Error: Invalid rule 'allow='. The target cannot be blank; use ACTION=TARGET, for example allow=pypi.org.\n"},
		{[]string{"egress", "patch", id, "--rule", "allow=a.org", "-o", "xml"}, `invalid argument "xml" for "-o, --output"`},
		{[]string{"egress", "delete", id}, `required flag(s) "target" not set`},
		{[]string{"egress", "delete", id, "--target", " "}, "Error: --target cannot be blank.\n"},
		{[]string{"egress", "get"}, "missing SANDBOX_ID"},
	} {
		r := env.Run(append([]string{"-v"}, c.args...)...).ExpectCode(t, 2)
		// Our own messages are whole lines and all there is; cobra's come with usage help.
		exact := strings.HasPrefix(c.msg, "Error: ")
		if (exact && r.Stderr != c.msg) || !strings.Contains(r.Stderr, c.msg) || r.Stdout != "" {
			t.Errorf("%v: stderr %q, want %q; stdout %q", c.args, r.Stderr, c.msg, r.Stdout)
		}
		if reqs := requests(r.Stderr); len(reqs) > 0 {
			t.Errorf("%v sent requests: %v", c.args, reqs)
		}
	}
	if after := policy(t, env, id); after != before {
		t.Errorf("policy changed from %s to %s", before, after)
	}
}

func TestEgressServerErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := image(t, env)
	r := env.Run("egress", "get", "0123456789abcdef").ExpectCode(t, 4)
	if !strings.Contains(r.Stderr, "Sandbox 0123456789abcdef not found.") {
		t.Errorf("unknown sandbox: %q", r.Stderr)
	}
	// The sidecar's text/plain 400 becomes one line, exit 1.
	r = env.Run("egress", "patch", id, "--rule", "allow=https://pypi.org/simple").ExpectCode(t, 1)
	if want := `Error: invalid patch rules: egress[0]: invalid egress target "https://pypi.org/simple": use a domain such as example.com or *.example.com (HTTP 400`; !strings.HasPrefix(r.Stderr, want) {
		t.Errorf("400: %q", r.Stderr)
	}
	r = env.Run("egress", "patch", id, "--rule", "allow=a.*.org", "-o", "json").ExpectCode(t, 1)
	var e struct {
		Status     string
		ExitCode   int `json:"exit_code"`
		HTTPStatus int `json:"http_status"`
	}
	if err := json.Unmarshal([]byte(r.Stderr), &e); err != nil || e.HTTPStatus != 400 || e.ExitCode != 1 || r.Stdout != "" {
		t.Errorf("400 under -o json: %q %q", r.Stdout, r.Stderr)
	}
	// A paused sandbox's data plane answers 409.
	env.Must("sandbox", "pause", id)
	r = env.Run("egress", "get", id).ExpectCode(t, 1)
	if !strings.Contains(r.Stderr, "is paused; resume it first") || !strings.Contains(r.Stderr, "HTTP 409") {
		t.Errorf("paused: %q", r.Stderr)
	}
}

func TestEgressThroughEndpointHeadersAndProxy(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := image(t, env)
	for _, proxy := range []bool{false, true} {
		args := []string{"-v"}
		if proxy {
			args = append(args, "--use-server-proxy")
		}
		target := fmt.Sprintf("p%v.example.com", proxy)
		r := env.Run(append(args, "egress", "patch", id, "--rule", "allow="+target)...).ExpectCode(t, 0)
		reqs := requests(r.Stderr)
		want := fmt.Sprintf("/endpoints/18080?use_server_proxy=%v", proxy)
		if len(reqs) != 3 || !strings.Contains(reqs[0], "/endpoints/44772") || !strings.Contains(reqs[1], want) || !strings.Contains(reqs[2], "* PATCH http://") {
			t.Errorf("proxy=%v requests %v", proxy, reqs)
		}
		// Both endpoints are the server's data-plane route.
		if !strings.Contains(reqs[2], "/sandboxes/"+id+"/proxy/18080/policy") {
			t.Errorf("proxy=%v went to %s", proxy, reqs[2])
		}
		if out := env.Must(append(args[1:], "egress", "get", id, "-o", "json")...); !strings.Contains(out, target) {
			t.Errorf("proxy=%v get: %s", proxy, out)
		}
	}
	// Without the endpoint's token the data plane refuses: the headers are what made the calls work.
	ep := env.Must("sandbox", "endpoint", id, "-p", "18080", "-o", "json")
	var v struct{ Endpoint string }
	json.Unmarshal([]byte(ep), &v)
	resp, err := http.Get("http://" + v.Endpoint + "/policy")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("sidecar without token: %d", resp.StatusCode)
	}
}

func TestEgressOfTemplateSandboxUsesTheControlPlane(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := create(t, env, "--template", env.Template("python:3.11"), "-t", "10m")
	golden(t, "template_get_table", id, env.Run("egress", "get", id))
	r := env.Run("-v", "egress", "patch", id, "--rule", "allow=files.pythonhosted.org", "--rule", "deny=pypi.org", "-o", "json").ExpectCode(t, 0)
	reqs := requests(r.Stderr)
	if len(reqs) != 2 || !strings.Contains(reqs[0], "/endpoints/44772") || !strings.Contains(reqs[1], "* PATCH http://"+env.Server.Addr()+"/v1/sandboxes/"+id+"/networkpolicy") {
		t.Errorf("requests %v", reqs)
	}
	env.Must("egress", "delete", id, "--target", "files.pythonhosted.org", "--target", "nope.org")
	// Intent semantics: the patched rule kept its place.
	if got := policy(t, env, id); got != `{"defaultAction":"deny","egress":[{"action":"deny","target":"pypi.org"}]}` {
		t.Errorf("intent %s", got)
	}
}
