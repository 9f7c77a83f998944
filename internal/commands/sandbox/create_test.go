package sandbox_test

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
)

func TestCreateFormats(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, format := range []string{"table", "json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			r := env.Run("sandbox", "create", "-i", "python:3.11", "-t", "30m", "-m", "team=ml", "-o", format).ExpectCode(t, 0)
			ids := sandboxIDs(t, env)
			id := ids[len(ids)-1]
			golden(t, "create_"+format, r, id)
		})
	}
	expectSandboxes(t, env, 3)
}

// sandboxJSON is what `get -o json` says about the fields these tests check.
type sandboxJSON struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	CreatedAt string            `json:"created_at"`
	ExpiresAt *string           `json:"expires_at"`
	Metadata  map[string]string `json:"metadata"`
	Image     *struct {
		Image string `json:"image"`
	} `json:"image"`
}

func getJSON(t *testing.T, env *cmdtest.Env, id string) sandboxJSON {
	t.Helper()
	var sb sandboxJSON
	if err := json.Unmarshal([]byte(env.Must("sandbox", "get", id, "-o", "json")), &sb); err != nil {
		t.Fatal(err)
	}
	return sb
}

// createdOnServer is the server's view of the sandbox that a
// `sandbox create -o json` printed: what was sent, not what was shown.
func createdOnServer(t *testing.T, env *cmdtest.Env, out string) sandboxJSON {
	t.Helper()
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.ID == "" {
		t.Fatalf("create printed no id (%v):\n%s", err, out)
	}
	return getJSON(t, env, created.ID)
}

// lifetime is how long the server gave a sandbox: expires_at - created_at,
// or -1 for none.
func lifetime(t *testing.T, sb sandboxJSON) time.Duration {
	t.Helper()
	if sb.ExpiresAt == nil {
		return -1
	}
	created, err1 := time.Parse(time.RFC3339, sb.CreatedAt)
	expires, err2 := time.Parse(time.RFC3339, *sb.ExpiresAt)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad timestamps %q %q", sb.CreatedAt, *sb.ExpiresAt)
	}
	return expires.Sub(created)
}

func TestCreateTimeouts(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, tc := range []struct {
		name     string
		args     []string
		shown    string
		lifetime time.Duration
	}{
		{"sdk default", nil, "sdk-default", 600 * time.Second},
		{"none", []string{"-t", "NONE"}, "manual-cleanup", -1},
		{"bare seconds", []string{"-t", "90"}, "0:01:30", 90 * time.Second},
		{"hours and minutes", []string{"--timeout", "1h30m"}, "1:30:00", 90 * time.Minute},
		{"over a day", []string{"-t", "26h"}, "1 day, 2:00:00", 26 * time.Hour},
		{"days", []string{"-t", "50h0m5s"}, "2 days, 2:00:05", 50*time.Hour + 5*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := env.Must(append([]string{"sandbox", "create", "-i", "python:3.11", "-o", "json"}, tc.args...)...)
			var panel struct{ ID, Timeout string }
			json.Unmarshal([]byte(out), &panel)
			if panel.Timeout != tc.shown {
				t.Errorf("timeout shown as %q, want %q", panel.Timeout, tc.shown)
			}
			if got := lifetime(t, getJSON(t, env, panel.ID)); got != tc.lifetime {
				t.Errorf("server lifetime %v, want %v", got, tc.lifetime)
			}
		})
	}
}

func TestCreateConfigDefaults(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.WriteConfig("[defaults]\nimage = \"python:3.12\"\ntimeout = \"15m\"\n")
	out := env.Must("sandbox", "create")
	id := sandboxIDs(t, env)[0]
	cmdtest.Golden(t, "create_config_defaults", norm(out, id))
	sb := getJSON(t, env, id)
	if sb.Image.Image != "python:3.12" || lifetime(t, sb) != 15*time.Minute {
		t.Errorf("config defaults not applied: image %q lifetime %v", sb.Image.Image, lifetime(t, sb))
	}

	// The flags win over the config.
	out = env.Must("sandbox", "create", "-i", "alpine:3", "-t", "2m", "-o", "json")
	if !strings.Contains(out, `"timeout": "0:02:00"`) || !strings.Contains(out, `"image": "alpine:3"`) {
		t.Errorf("flags should override defaults:\n%s", out)
	}
	if sb := createdOnServer(t, env, out); sb.Image.Image != "alpine:3" || lifetime(t, sb) != 2*time.Minute {
		t.Errorf("flags not sent: image %q lifetime %v", sb.Image.Image, lifetime(t, sb))
	}

	env.WriteConfig("[defaults]\nimage = \"python:3.12\"\ntimeout = \"none\"\n")
	out = env.Must("sandbox", "create", "-o", "json")
	if !strings.Contains(out, `"timeout": "manual-cleanup"`) {
		t.Errorf("defaults.timeout = none should mean manual cleanup:\n%s", out)
	}
	if sb := createdOnServer(t, env, out); lifetime(t, sb) != -1 {
		t.Errorf("defaults.timeout = none gave the sandbox a lifetime of %v", lifetime(t, sb))
	}

	env.WriteConfig("[defaults]\nimage = \"python:3.12\"\ntimeout = \"soon\"\n")
	env.Run("sandbox", "create").ExpectError(t, 2, "invalid defaults.timeout in the config file: invalid duration 'soon'")
	// A request file ignores the config's defaults.
	f := cmdtest.WriteFile(t, "req.json", `{"image": "busybox"}`)
	out = env.Must("sandbox", "create", "-f", f, "-o", "json")
	if !strings.Contains(out, `"timeout": "sdk-default"`) || !strings.Contains(out, `"image": "busybox"`) {
		t.Errorf("-f must not take config defaults:\n%s", out)
	}
	if sb := createdOnServer(t, env, out); sb.Image.Image != "busybox" {
		t.Errorf("-f sent image %q", sb.Image.Image)
	}
	expectSandboxes(t, env, 4)
}

func TestCreateRequestFile(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	f := cmdtest.WriteFile(t, "req.json", `{
  "image": {"uri": "registry.example/app:2", "auth": {"username": "robot", "password": "s3cret-pw"}},
  "timeout": null,
  "env": {"MODE": "test"},
  "metadata": {"team": "ml"},
  "entrypoint": ["sleep", "infinity"]
}`)
	for _, format := range []string{"table", "json", "yaml"} {
		r := env.Run("sandbox", "create", "-f", f, "-o", format).ExpectCode(t, 0)
		if strings.Contains(r.Stdout+r.Stderr, "s3cret-pw") {
			t.Fatalf("the registry password was printed:\n%s%s", r.Stdout, r.Stderr)
		}
		ids := sandboxIDs(t, env)
		cmdtest.Golden(t, "create_file_"+format, norm(strings.ReplaceAll(r.Stdout, f, "<FILE>"), ids[len(ids)-1]))
	}
	sb := getJSON(t, env, sandboxIDs(t, env)[0])
	if sb.Image.Image != "registry.example/app:2" || sb.ExpiresAt != nil || sb.Metadata["team"] != "ml" {
		t.Errorf("server state does not match the file: %+v", sb)
	}
}

// Every validation failure is exit 2, names the problem in one line, and
// sends nothing: the server still holds no sandbox.
func TestCreateValidation(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	dir := t.TempDir()
	file := func(content string) string {
		f, err := os.CreateTemp(dir, "*.json")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(content)
		f.Close()
		return f.Name()
	}
	goodPolicy := file(`{"defaultAction": "deny", "egress": [{"action": "allow", "target": "pypi.org"}]}`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"template and snapshot", []string{"--template", "tpl_1", "--snapshot-id", "snap_1"},
			"--template and --snapshot-id are mutually exclusive."},
		{"template workload", []string{"--template", "tpl_1", "-i", "x", "--image-auth-username", "u", "-e", "A=1", "--resource", "cpu=1", "--entrypoint", "sh", "--volumes-file", goodPolicy, "--credential-proxy"},
			"Template mode fixes the workload shape on the server; --image, --image-auth-username/--image-auth-password, --env, --resource, --entrypoint, --volumes-file, --credential-proxy cannot be combined with --template."},
		{"snapshot and image", []string{"--snapshot-id", "snap_1", "-i", "x"}, "--snapshot-id and --image are mutually exclusive."},
		{"snapshot and auth", []string{"--snapshot-id", "snap_1", "--image-auth-password", "p"}, "--snapshot-id cannot be combined with image auth options."},
		{"no image", nil, "Sandbox image is required. Pass --image, use --file, or set defaults.image in the CLI config."},
		{"half auth", []string{"-i", "x", "--image-auth-username", "u"}, "Pass both --image-auth-username and --image-auth-password together."},
		{"credential proxy alone", []string{"-i", "x", "--credential-proxy"}, "--credential-proxy requires --network-policy-file because Credential Vault injection needs egress policy."},
		{"bad timeout", []string{"-i", "x", "-t", "10x"}, "invalid --timeout: invalid duration '10x'. Use format like 10m, 1h30m, 90s"},
		{"empty timeout", []string{"-i", "x", "-t", " "}, "invalid --timeout: duration cannot be empty"},
		{"huge timeout", []string{"-i", "x", "-t", "4000000000h"}, "invalid --timeout: invalid duration '4000000000h': number too large"},
		{"policy not JSON", []string{"-i", "x", "--network-policy-file", file(`{"defaultAction": `)}, "Invalid JSON in network policy file"},
		{"policy action", []string{"-i", "x", "--network-policy-file", file(`{"default_action": "maybe"}`)}, `: defaultAction: must be "allow" or "deny"`},
		{"policy rule", []string{"-i", "x", "--network-policy-file", file(`{"egress": [{"action": "allow"}]}`)}, ": egress.0.target: field required"},
		{"policy missing", []string{"-i", "x", "--network-policy-file", dir + "/nope.json"}, "cannot read network policy file '" + dir + "/nope.json': no such file or directory"},
		{"volumes not array", []string{"-i", "x", "--volumes-file", file(`{"name": "v"}`)}, "Volumes file must contain a JSON array, got object."},
		{"volume path", []string{"-i", "x", "--volumes-file", file(`[{"name": "v", "mount_path": "data", "host": {"path": "/srv"}}]`)}, ": 0.mountPath: must be an absolute path"},
		{"volume backends", []string{"-i", "x", "--volumes-file", file(`[{"name": "v", "mountPath": "/d", "host": {"path": "/srv"}, "pvc": {"claimName": "c"}}]`)}, ": 0: exactly one of host, pvc, ossfs must be set (got 2)"},
		{"volume backend field", []string{"-i", "x", "--volumes-file", file(`[{"name": "v", "mountPath": "/d", "pvc": {}}]`)}, ": 0.pvc.claimName: field required"},
		{"template without timeout", []string{"--template", "tpl_1"}, "--timeout is required when creating a sandbox from a template (e.g. --timeout 30m)."},
		{"template manual cleanup", []string{"--template", "tpl_1", "-t", "none", "--network-policy-file", goodPolicy}, "--timeout none (manual cleanup) is not supported in template mode."},
		{"bad env", []string{"-i", "x", "-e", "FOO"}, "expected KEY=VALUE format, got 'FOO'"},
		{"bad resource", []string{"-i", "x", "--resource", "cpu"}, "expected KEY=VALUE format, got 'cpu'"},
		{"bad ready timeout", []string{"-i", "x", "--ready-timeout", "5q"}, "invalid duration '5q'"},
		// The official client creates the sandbox, gives up before the
		// first check, and deletes it again.
		{"zero ready timeout", []string{"-i", "x", "--ready-timeout", "0s"}, `invalid argument "0s" for "--ready-timeout" flag: a timeout of 0 would end at once`},
		{"bad format", []string{"-i", "x", "-o", "xml"}, "'xml' is not one of 'table', 'json', 'yaml'"},
		{"file conflicts", []string{"-f", goodPolicy, "-i", "x", "-t", "1m", "-e", "A=1", "--credential-proxy"}, "--file cannot be combined with: --image, --timeout, --env, --credential-proxy."},
		{"file missing", []string{"-f", dir + "/nope.json"}, "cannot read request file '" + dir + "/nope.json': no such file or directory"},
		{"file is a directory", []string{"-f", dir}, "request file '" + dir + "' is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.Run(append([]string{"sandbox", "create"}, tc.args...)...).ExpectError(t, 2, tc.want)
		})
	}
	expectSandboxes(t, env, 0)
}

func TestCreateRequestFileValidation(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not JSON", `{"image": "x",}`, "Invalid JSON in request file '<FILE>': line 1, column 15: invalid character '}'"},
		{"trailing data", `{"image": "x"} {}`, "Invalid JSON in request file '<FILE>': line 1, column 16: extra data after the JSON value"},
		{"not an object", `["x"]`, "Request file '<FILE>' must contain a JSON object."},
		{"unknown fields", `{"image": "x", "name": "a", "cpu": 1}`, "Request file '<FILE>' has unsupported fields: cpu, name. Supported fields: image, templateId, snapshotId, platform, timeout, resourceLimits, resourceRequests, env, metadata, lifecycle, entrypoint, networkPolicy, credentialProxy, secureAccess, volumes, extensions."},
		{"no source", `{"timeout": 60, "image": null}`, "Request file '<FILE>' must set one of 'image', 'templateId', or 'snapshotId'."},
		{"two sources", `{"image": "x", "snapshotId": "s", "templateId": null}`, "Request file '<FILE>' must set only one of 'image', 'templateId', 'snapshotId'; got image, snapshotId."},
		{"blank image", `{"image": "  "}`, "Request file field 'image' in '<FILE>' must be a non-empty image reference or an object with 'uri'."},
		{"image without uri", `{"image": {"auth": {"username": "u", "password": "p"}}}`, "Invalid 'image' in request file '<FILE>': uri: field required"},
		{"image auth", `{"image": {"uri": "x", "auth": {"username": "u"}}}`, "Invalid 'image' in request file '<FILE>': auth.password: field required"},
		{"empty template id", `{"templateId": ""}`, "Request file field 'templateId' in '<FILE>' must be a non-empty string."},
		{"zero timeout", `{"image": "x", "timeout": 0}`, "Request file field 'timeout' in '<FILE>' must be a positive integer of seconds, or null for manual cleanup."},
		{"bool timeout", `{"image": "x", "timeout": true}`, "must be a positive integer of seconds"},
		{"fractional timeout", `{"image": "x", "timeout": 60.5}`, "must be a positive integer of seconds"},
		{"template workload", `{"templateId": "t", "timeout": 600, "entrypoint": ["x"], "env": {"A": "1"}, "platform": null}`, "Template mode fixes the workload shape on the server; request file cannot combine 'templateId' with 'env', 'entrypoint'."},
		{"env value", `{"image": "x", "env": {"A": 1}}`, "Invalid 'env' in request file '<FILE>': A: must be a string, got number"},
		{"metadata type", `{"image": "x", "metadata": ["a"]}`, "Invalid 'metadata' in request file '<FILE>': must be an object of strings, got array"},
		{"empty entrypoint", `{"image": "x", "entrypoint": []}`, "Invalid 'entrypoint' in request file '<FILE>': must be a non-empty array of strings"},
		{"platform", `{"image": "x", "platform": {"os": "linux"}}`, "Invalid 'platform' in request file '<FILE>': arch: field required"},
		{"secure access", `{"image": "x", "secureAccess": "yes"}`, "Invalid 'secureAccess' in request file '<FILE>': must be true or false, got string"},
		{"policy", `{"image": "x", "networkPolicy": {"defaultAction": "block"}}`, `Invalid 'networkPolicy' in request file '<FILE>': defaultAction: must be "allow" or "deny"`},
		{"volumes", `{"image": "x", "volumes": [{"name": "v"}]}`, "Invalid 'volumes' in request file '<FILE>': 0.mountPath: field required"},
		{"lifecycle", `{"image": "x", "lifecycle": "soon"}`, "Invalid 'lifecycle' in request file '<FILE>': must be an object, got string"},
		{"credential proxy", `{"image": "x", "credentialProxy": {"enabled": true}}`, "Request file '<FILE>' enables 'credentialProxy' without 'networkPolicy'; Credential Vault injection needs an egress policy."},
		{"template without timeout", `{"templateId": "t"}`, "--timeout is required when creating a sandbox from a template (e.g. --timeout 30m)."},
		{"template manual cleanup", `{"templateId": "t", "timeout": null}`, "--timeout none (manual cleanup) is not supported in template mode."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := cmdtest.WriteFile(t, "req.json", tc.content)
			r := env.Run("sandbox", "create", "-f", f)
			r.Stderr = strings.ReplaceAll(r.Stderr, f, "<FILE>")
			r.ExpectError(t, 2, tc.want)
		})
	}
	expectSandboxes(t, env, 0)
}

// Readiness that does not come in time deletes the sandbox and exits 5.
func TestCreateReadinessTimeoutDeletes(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t)
	fs.pingStatus = http.StatusServiceUnavailable
	env := fs.env(t)
	r := env.Run("sandbox", "create", "-i", "python:3.11", "--ready-timeout", "1s")
	r.ExpectError(t, 5, "was not ready within 1s")
	deleted := regexp.MustCompile(`^Error: sandbox fake-1 was not ready within 1s \([^\n]+\); sandbox fake-1 was deleted\n$`)
	if !deleted.MatchString(r.Stderr) {
		t.Errorf("the error should say the sandbox was deleted: %q", r.Stderr)
	}
	if log := fs.log(); !slices.Contains(log, "DELETE /v1/sandboxes/fake-1") {
		t.Errorf("requests %v, want the delete of fake-1", log)
	}

	r = env.Run("sandbox", "create", "-i", "python:3.11", "--ready-timeout", "1s", "-o", "json").ExpectCode(t, 5)
	var e struct {
		Status   string `json:"status"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(r.Stderr), &e); err != nil || e.Status != "error" || e.ExitCode != 5 || r.Stdout != "" {
		t.Errorf("-o json error: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	if log := fs.log(); !slices.Contains(log, "DELETE /v1/sandboxes/fake-2") {
		t.Errorf("requests %v, want the delete of fake-2", log)
	}
}

// A snapshot the server does not have is its 404, exit 4.
func TestCreateUnknownSnapshot(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Run("sandbox", "create", "--snapshot-id", "snap_missing").ExpectError(t, 4, "snap_missing")
	expectSandboxes(t, env, 0)
}

// The request bodies of each mode, seen by a scripted server, and the
// readiness calls that follow.
func TestCreateRequestBodies(t *testing.T) {
	t.Parallel()
	policy := cmdtest.WriteFile(t, "policy.json", `{"default_action": "deny", "egress": [{"action": "allow", "target": "pypi.org"}]}`)
	volumes := cmdtest.WriteFile(t, "volumes.json", `[{"name": "data", "mount_path": "/data", "read_only": true, "pvc": {"claim_name": "c1"}}]`)
	reqFile := cmdtest.WriteFile(t, "req.json", `{"image": "busybox", "timeout": 120, "secureAccess": true, "credentialProxy": false, "env": null}`)
	wantPolicy := map[string]any{"defaultAction": "deny", "egress": []any{map[string]any{"action": "allow", "target": "pypi.org"}}}
	defaults := map[string]any{"cpu": "1", "memory": "2Gi"}
	for _, tc := range []struct {
		name string
		args []string
		body map[string]any
	}{
		{"template", []string{"--template", "tpl_1", "-t", "30m", "-m", "a=b", "--extension", "poolRef=", "--network-policy-file", policy},
			map[string]any{"templateId": "tpl_1", "timeout": 1800.0, "metadata": map[string]any{"a": "b"}, "extensions": map[string]any{"poolRef": ""}, "networkPolicy": wantPolicy}},
		{"snapshot", []string{"--snapshot-id", "snap_1", "-t", "none"},
			map[string]any{"snapshotId": "snap_1", "timeout": nil, "resourceLimits": defaults}},
		{"image", []string{"-i", "private.example/app:1", "--image-auth-username", "robot", "--image-auth-password", "hunter2",
			"-e", "A=1", "-e", "A=2", "--resource", "cpu=2", "--entrypoint", "sh", "--entrypoint", "-c", "--entrypoint", "sleep 1",
			"--network-policy-file", policy, "--credential-proxy", "--volumes-file", volumes},
			map[string]any{"image": map[string]any{"uri": "private.example/app:1", "auth": map[string]any{"username": "robot", "password": "hunter2"}},
				"timeout": 600.0, "env": map[string]any{"A": "2"}, "resourceLimits": map[string]any{"cpu": "2"},
				"entrypoint": []any{"sh", "-c", "sleep 1"}, "networkPolicy": wantPolicy, "credentialProxy": map[string]any{"enabled": true},
				"volumes": []any{map[string]any{"name": "data", "mountPath": "/data", "readOnly": true, "pvc": map[string]any{"claimName": "c1"}}}}},
		{"file", []string{"-f", reqFile},
			map[string]any{"image": map[string]any{"uri": "busybox"}, "timeout": 120.0, "secureAccess": true, "credentialProxy": map[string]any{"enabled": false},
				"resourceLimits": defaults, "entrypoint": []any{"tail", "-f", "/dev/null"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t)
			r := fs.env(t).Run(append([]string{"sandbox", "create"}, tc.args...)...).ExpectCode(t, 0)
			if bodies := fs.bodies(); len(bodies) != 1 || !reflect.DeepEqual(bodies[0], tc.body) {
				got, _ := json.Marshal(bodies)
				want, _ := json.Marshal(tc.body)
				t.Errorf("request body\n got %s\nwant %s", got, want)
			}
			if strings.Contains(r.Stdout+r.Stderr, "hunter2") {
				t.Errorf("the registry password was printed")
			}
			r.Stdout = strings.ReplaceAll(r.Stdout, reqFile, "<FILE>")
			golden(t, "create_body_"+tc.name, r)
		})
	}
	// After the POST: state, the execd endpoint (its path kept, its
	// headers replayed), then ping.
	fs := newFakeServer(t)
	fs.env(t).Run("sandbox", "create", "-i", "x").ExpectCode(t, 0)
	want := []string{
		"POST /v1/sandboxes",
		"GET /v1/sandboxes/fake-1",
		"GET /v1/sandboxes/fake-1/endpoints/44772?use_server_proxy=false",
		"GET /proxy/44772/ping [X-Fake-Route: fake-1]",
	}
	if got := fs.log(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n got %q\nwant %q", got, want)
	}
	// --skip-health-check stops after the POST.
	fs = newFakeServer(t)
	fs.env(t).Run("sandbox", "create", "-i", "x", "--skip-health-check").ExpectCode(t, 0)
	if got := fs.log(); !reflect.DeepEqual(got, want[:1]) {
		t.Errorf("requests with --skip-health-check: %q", got)
	}
}

func TestCreateFromTemplate(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tpl := env.Template("python:3.11")
	r := env.Run("sandbox", "create", "--template", tpl, "-t", "30m", "-m", "team=ml").ExpectCode(t, 0)
	ids := sandboxIDs(t, env)
	golden(t, "create_template_table", r, ids[0], tpl)
	sb := getJSON(t, env, ids[0])
	if sb.Status.State != "Running" || sb.Metadata["team"] != "ml" || lifetime(t, sb) != 30*time.Minute {
		t.Errorf("sandbox from template: %+v", sb)
	}
	env.Run("sandbox", "create", "--template", "tpl_missing", "-t", "30m").ExpectError(t, 4, "tpl_missing")
	expectSandboxes(t, env, 1)
}
