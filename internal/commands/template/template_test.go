package template_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server/servertest"
)

func newEnv(t *testing.T) *cmdtest.Env {
	t.Helper()
	return cmdtest.New(t, servertest.NoIsolation)
}

// wireTemplate is a template as the server stores it (camelCase).
type wireTemplate struct {
	TemplateID     string
	Image          string
	Publish        string
	Format         string
	Status         struct{ Phase, Message string }
	ResourceLimits map[string]string
	Entrypoint     []string
	Env            map[string]string
	Metadata       map[string]string
	Readiness      *struct {
		Probe         *string
		WarmupSeconds *int
	}
}

func serverTemplates(t *testing.T, env *cmdtest.Env) []wireTemplate {
	t.Helper()
	var list struct{ Items []wireTemplate }
	env.APIGet("/templates", &list)
	return list.Items
}

// create runs `template create` with args and returns the new id.
func create(t *testing.T, env *cmdtest.Env, args ...string) string {
	t.Helper()
	out := env.Must(append([]string{"template", "create", "-o", "json"}, args...)...)
	var v struct {
		TemplateID string `json:"template_id"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.TemplateID == "" {
		t.Fatalf("create printed no id: %v\n%s", err, out)
	}
	return v.TemplateID
}

// settle waits (through osb) until the server has checked the template,
// and returns its phase.
func settle(t *testing.T, env *cmdtest.Env, id string) string {
	t.Helper()
	var v struct{ Status struct{ Phase string } }
	cmdtest.Eventually(t, "template "+id+" checked", func() bool {
		json.Unmarshal([]byte(env.Must("template", "get", id, "-o", "json")), &v)
		return v.Status.Phase != "Pending"
	})
	return v.Status.Phase
}

// norm normalizes ids and times, and in tables the column padding.
func norm(s, format string, ids map[string]string) string {
	s = cmdtest.Normalize(s, ids)
	if format == "table" {
		s = cmdtest.Squeeze(s)
	}
	return s
}

func TestCreateFormats(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, format := range []string{"table", "json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			r := env.Run("template", "create", "-i", "python:3.11", "-p", "s3://bucket/publish", "-o", format).ExpectCode(t, 0)
			all := serverTemplates(t, env)
			id := all[len(all)-1].TemplateID
			cmdtest.Golden(t, "create_"+format, cmdtest.Normalize(r.Combined(), map[string]string{id: "<TPL>"}))
		})
	}
}

func TestCreateSendsEveryFlag(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := create(t, env, "-i", "python:3.11", "-p", "s3://bucket/p", "--resource", "cpu=1", "--resource", "memory=512Mi",
		"--entrypoint", "tail", "--entrypoint", "-f", "--entrypoint", "/dev/null", "-e", "A=1", "-e", "B=x=y",
		"-m", "team=ml", "--format", "NATIVE", "--readiness-probe", "tcp://127.0.0.1:44772", "--warmup-seconds", "0")
	plain := create(t, env, "-i", "alpine", "-p", "s3://b")
	got := map[string]wireTemplate{}
	for _, tpl := range serverTemplates(t, env) {
		got[tpl.TemplateID] = tpl
	}
	full := got[id]
	if full.Format != "native" || full.ResourceLimits["memory"] != "512Mi" || strings.Join(full.Entrypoint, " ") != "tail -f /dev/null" ||
		full.Env["B"] != "x=y" || full.Metadata["team"] != "ml" || full.Readiness == nil ||
		*full.Readiness.Probe != "tcp://127.0.0.1:44772" || *full.Readiness.WarmupSeconds != 0 {
		t.Errorf("server got %+v", full)
	}
	if p := got[plain]; p.Readiness != nil || p.Format != "overlaybd" || p.Entrypoint != nil || p.Env != nil {
		t.Errorf("unset flags were sent: %+v", p)
	}
	if phase := settle(t, env, id); phase != "Succeeded" {
		t.Errorf("phase %s", phase)
	}
}

func TestCreateFromFile(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	path := cmdtest.WriteFile(t, "template.json", `{"image": "python:3.11", "publish": "s3://bucket/p", "resource_limits": {"cpu": "2"},
		"readiness": {"warmup_seconds": 7}, "format": "overlaybd", "name": "ignored", "zzz": 1}`)
	for _, format := range []string{"table", "json"} {
		r := env.Run("template", "create", "-f", path, "-o", format).ExpectCode(t, 0)
		all := serverTemplates(t, env)
		id := all[len(all)-1].TemplateID
		cmdtest.Golden(t, "create_file_"+format, cmdtest.Normalize(r.Combined(), map[string]string{id: "<TPL>", path: "<FILE>"}))
	}
	tpl := serverTemplates(t, env)[0]
	if tpl.ResourceLimits["cpu"] != "2" || tpl.Readiness == nil || *tpl.Readiness.WarmupSeconds != 7 {
		t.Errorf("server got %+v", tpl)
	}
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	file := func(content string) string { return cmdtest.WriteFile(t, "template.json", content) }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, "Missing required options: --image, --publish (or pass --file)."},
		{"no publish", []string{"-i", "python:3.11"}, "Missing required options: --publish (or pass --file)."},
		{"blank image", []string{"-i", " ", "-p", "s3://b"}, "Missing required options: --image (or pass --file)."},
		{"file and flags", []string{"-f", file(`{}`), "-i", "", "--format", "native", "--warmup-seconds", "3", "-e", "A=1"},
			"--file cannot be combined with: --image, --env, --format, --warmup-seconds."},
		{"negative warmup", []string{"-i", "x", "-p", "s3://b", "--warmup-seconds", "-1"}, "--warmup-seconds must be 0 or more, got -1"},
		{"bad format", []string{"-i", "x", "-p", "s3://b", "--format", "zip"}, "'zip' is not one of 'native', 'overlaybd'"},
		{"bad env", []string{"-i", "x", "-p", "s3://b", "-e", "NOEQUALS"}, "expected KEY=VALUE format, got 'NOEQUALS'"},
		{"missing file", []string{"-f", filepath.Join(t.TempDir(), "nope.json")}, "cannot read request file"},
		{"directory", []string{"-f", t.TempDir()}, "is a directory"},
		{"bad json", []string{"-f", file("{\n  \"image\": ,\n}")}, "Invalid JSON in request file"},
		{"not an object", []string{"-f", file(`["x"]`)}, "must contain a JSON object."},
		{"empty object", []string{"-f", file(`{}`)}, "image: field required; publish: field required"},
		{"bad fields", []string{"-f", file(`{"image": 3, "publish": " ", "format": "zip", "env": {"A": 1},
			"entrypoint": "tail", "readiness": {"probe": 1, "warmupSeconds": -2}}`)},
			"image: must be a string; publish: must not be blank; entrypoint: must be an array of strings; env.A: must be a string; " +
				"format: must be 'native' or 'overlaybd'; readiness.probe: must be a string; readiness.warmupSeconds: must be 0 or more"},
		{"fractional warmup", []string{"-f", file(`{"image": "x", "publish": "s3://b", "readiness": {"warmupSeconds": 1.5}}`)},
			"readiness.warmupSeconds: must be an integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env.Run(append([]string{"template", "create"}, tc.args...)...).ExpectError(t, 2, tc.want)
		})
	}
	// A -q or --jq key the output lacks is found before the request: a
	// retrying script must not make a template at each try.
	keys := "template_id, image, status, request_file"
	env.Run("template", "create", "-i", "x", "-p", "s3://b", "-q", "id").
		ExpectJSONError(t, 2, "-q 'id' would match nothing in the output, whose top-level keys are: "+keys+"; nothing was sent")
	env.Run("template", "create", "-i", "x", "-p", "s3://b", "--jq", ".id").
		ExpectJSONError(t, 2, "--jq '.id' would match nothing in the output, whose top-level keys are: "+keys+"; nothing was sent")
	if n := len(serverTemplates(t, env)); n != 0 {
		t.Errorf("refused commands created %d templates", n)
	}
}

func TestGetListDelete(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	r := env.Run("template", "list")
	if r.Code != 0 || r.Stdout != "INFO: No templates found.\n" {
		t.Errorf("empty list: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	cmdtest.Golden(t, "list_empty_json", env.Must("template", "list", "-o", "json"))
	a := create(t, env, "-i", "python:3.11", "-p", "s3://bucket/a", "-m", "team=ml", "--entrypoint", "sleep", "--entrypoint", "60",
		"-e", "A=1", "--resource", "cpu=1", "--readiness-probe", "cmd://true", "--warmup-seconds", "5")
	b := create(t, env, "-i", "alpine:3", "-p", "s3://bucket/b", "--entrypoint", "no-such-program-osb")
	settle(t, env, a)
	settle(t, env, b)
	ids := map[string]string{a: "<TPL_A>", b: "<TPL_B>"}
	for _, format := range []string{"table", "json", "yaml"} {
		cmdtest.Golden(t, "get_"+format, norm(env.Must("template", "get", a, "-o", format), format, ids))
		cmdtest.Golden(t, "get_failed_"+format, norm(env.Must("template", "get", b, "-o", format), format, ids))
		cmdtest.Golden(t, "list_"+format, norm(env.Must("template", "list", "-o", format), format, ids))
	}
	cmdtest.Golden(t, "list_filtered", cmdtest.Normalize(env.Must("template", "list", "-m", "team=ml", "--page", "1", "--page-size", "1", "-o", "json"), ids))
	for _, args := range [][]string{{"--page", "0"}, {"--page-size", "0"}} {
		env.Run(append([]string{"template", "list"}, args...)...).ExpectError(t, 2, "must be at least 1")
	}
	env.Run("template", "list", "--page-size", "201").ExpectError(t, 1, "less than or equal to 200")

	r = env.Run("template", "delete", a).ExpectCode(t, 0)
	if r.Stdout != "OK: Template deleted: "+a+"\n" {
		t.Errorf("delete said %q", r.Stdout)
	}
	if out := env.Must("template", "delete", b, "-o", "json"); out != "{\n  \"status\": \"ok\",\n  \"message\": \"Template deleted: "+b+"\"\n}\n" {
		t.Errorf("delete -o json said %q", out)
	}
	env.Run("template", "get", a).ExpectError(t, 4, "Template "+a+" not found.")
	env.Run("template", "delete", a).ExpectError(t, 4, "not found")
	if n := len(serverTemplates(t, env)); n != 0 {
		t.Errorf("%d templates left", n)
	}
}

// The sandbox group's create sends templateId; the server applies the template.
func TestSandboxFromTemplate(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tpl := create(t, env, "-i", "registry.example.com/app:2", "-p", "s3://bucket/p", "-m", "team=ml",
		"--entrypoint", "sh", "--entrypoint", "-c", "--entrypoint", `printf %s "$WHO" > who; exec tail -f /dev/null`, "-e", "WHO=template")
	if phase := settle(t, env, tpl); phase != "Succeeded" {
		t.Fatalf("phase %s", phase)
	}
	var created struct{ ID string }
	json.Unmarshal([]byte(env.Must("sandbox", "create", "--template", tpl, "-t", "10m", "-m", "run=1", "-o", "json")), &created)
	var sb struct {
		Image      struct{ URI string }
		Entrypoint []string
		Metadata   map[string]string
	}
	env.APIGet("/sandboxes/"+created.ID, &sb)
	if sb.Image.URI != "registry.example.com/app:2" || sb.Entrypoint[0] != "sh" || sb.Metadata["team"] != "ml" || sb.Metadata["run"] != "1" {
		t.Errorf("sandbox %+v", sb)
	}
	runtime, _ := env.Server.Sandbox(created.ID)
	cmdtest.Eventually(t, "the entrypoint to write the template env", func() bool {
		b, _ := runtime.FS().ReadFile("workspace/who")
		return string(b) == "template"
	})
	env.Run("sandbox", "create", "--template", "tpl_nope", "-t", "10m").ExpectError(t, 4, "Template tpl_nope not found.")
	bad := create(t, env, "-i", "alpine", "-p", "s3://b", "--entrypoint", "no-such-program-osb")
	settle(t, env, bad)
	env.Run("sandbox", "create", "--template", bad, "-t", "10m").ExpectError(t, 4, "only a Succeeded template can back a sandbox")
}

// A template record without a template id (an empty object, a listing) is
// an error in one line, exit 1, not a blank record.
func TestRecordWithoutID(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `{"items":[],"pagination":{"page":1}}`} {
		env, addr, _ := cmdtest.Answering(t, body, http.StatusCreated)
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"template", "get", "tpl_1"}, "Error: the server answered GET http://" + addr + "/v1/templates/tpl_1 with a record without an id where a template was expected (HTTP 200)\n"},
			{[]string{"template", "create", "-i", "python:3.11", "-p", "s3://bucket/tpl"}, "Error: the server answered POST http://" + addr + "/v1/templates with a record without an id where a template was expected (HTTP 201)\n"},
		} {
			r := env.Run(tc.args...).ExpectCode(t, 1)
			if r.Stdout != "" || r.Stderr != tc.want {
				t.Errorf("%s %v: stdout %q stderr %q, want %q", body, tc.args, r.Stdout, r.Stderr, tc.want)
			}
		}
		r := env.Run("template", "get", "tpl_1", "-o", "json").ExpectCode(t, 1)
		if r.Stdout != "" || !strings.Contains(r.Stderr, `"exit_code": 1`) || !strings.Contains(r.Stderr, "where a template was expected") {
			t.Errorf("-o json: stdout %q stderr %q", r.Stdout, r.Stderr)
		}
	}
}
