//go:build linux

package server_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server/servertest"
)

// settledTemplate polls a template until its check is over and returns it.
func settledTemplate(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	var m map[string]any
	if !eventually(t, 30*time.Second, func() bool {
		m = c.expect(200, c.do("GET", "/templates/"+id, nil)).json(t)
		return m["status"].(map[string]any)["phase"] != "Pending"
	}) {
		t.Fatalf("template %s still Pending", id)
	}
	return m
}

func phaseOf(m map[string]any) string { return m["status"].(map[string]any)["phase"].(string) }

func createTemplate(t *testing.T, c *client, body map[string]any) string {
	t.Helper()
	return c.expect(201, c.do("POST", "/templates", body)).json(t)["templateId"].(string)
}

func TestTemplateLifecycle(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	body := map[string]any{
		"image": "python:3.11", "publish": "s3://bucket/publish", "format": "native",
		"entrypoint": []string{"tail", "-f", "/dev/null"}, "env": map[string]string{"A": "1"},
		"metadata": map[string]string{"team": "ml"}, "resourceLimits": map[string]string{"cpu": "1"},
		"readiness": map[string]any{"probe": "tcp://127.0.0.1:44772", "warmupSeconds": 5},
	}
	r := c.expect(201, c.do("POST", "/templates", body))
	m := r.json(t)
	id, _ := m["templateId"].(string)
	if !strings.HasPrefix(id, "tpl_") || phaseOf(m) != "Pending" || m["createdAt"] == nil || m["format"] != "native" {
		t.Fatalf("create answer %s", r.body)
	}
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v1/templates/"+id) {
		t.Errorf("Location %q", loc)
	}
	m = settledTemplate(t, c, id)
	if phaseOf(m) != "Succeeded" || !strings.Contains(m["status"].(map[string]any)["message"].(string), "no golden image was built") {
		t.Errorf("settled %v", m)
	}
	if m["readiness"].(map[string]any)["warmupSeconds"] != 5.0 || m["env"].(map[string]any)["A"] != "1" {
		t.Errorf("fields not kept: %v", m)
	}
	other := createTemplate(t, c, map[string]any{"image": "alpine", "publish": "s3://b"})
	if got := settledTemplate(t, c, other); got["format"] != "overlaybd" {
		t.Errorf("default format %v", got["format"])
	}
	list := func(query string) []any {
		t.Helper()
		return c.expect(200, c.do("GET", "/templates"+query, nil)).json(t)["items"].([]any)
	}
	if n := len(list("")); n != 2 {
		t.Errorf("%d templates, want 2", n)
	}
	if items := list("?metadata=" + url.QueryEscape("team=ml")); len(items) != 1 || items[0].(map[string]any)["templateId"] != id {
		t.Errorf("metadata filter: %v", items)
	}
	page := c.expect(200, c.do("GET", "/templates?pageSize=1", nil)).json(t)
	if p := page["pagination"].(map[string]any); p["hasNextPage"] != true || p["totalItems"] != 2.0 {
		t.Errorf("pagination %v", p)
	}
	c.expect(422, c.do("GET", "/templates?pageSize=201", nil))
	c.expect(204, c.do("DELETE", "/templates/"+id, nil))
	if r := c.expect(404, c.do("GET", "/templates/"+id, nil)); !strings.HasSuffix(r.code(), "TEMPLATE_NOT_FOUND") {
		t.Errorf("get deleted: %s", r.body)
	}
	c.expect(404, c.do("DELETE", "/templates/"+id, nil))
}

func TestTemplateValidation(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"image": "python:3.11", "publish": "s3://bucket/p"}
		for k, v := range extra {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	refused := []struct {
		name   string
		body   any
		status int
		check  string
	}{
		{"no image", base(map[string]any{"image": nil}), 422, `"loc":["body","image"]`},
		{"no publish", base(map[string]any{"publish": nil}), 422, `"loc":["body","publish"]`},
		{"bad format", base(map[string]any{"format": "zip"}), 422, `"literal_error"`},
		{"negative warmup", base(map[string]any{"readiness": map[string]any{"warmupSeconds": -1}}), 422, `"greater_than_equal"`},
		{"entrypoint not a list", base(map[string]any{"entrypoint": "tail"}), 422, `"list_type"`},
		{"bad label", base(map[string]any{"metadata": map[string]string{"bad key": "v"}}), 400, `INVALID_METADATA_LABEL`},
		{"not an object", `[]`, 422, `"detail"`},
	}
	for _, tc := range refused {
		r := c.do("POST", "/templates", tc.body)
		if r.status != tc.status || !strings.Contains(string(r.body), tc.check) {
			t.Errorf("%s: %d %s; want %d containing %s", tc.name, r.status, r.body, tc.status, tc.check)
		}
	}
	if n := len(c.expect(200, c.do("GET", "/templates", nil)).json(t)["items"].([]any)); n != 0 {
		t.Errorf("refused requests left %d templates", n)
	}
	failed := []struct {
		name  string
		body  map[string]any
		check string
	}{
		{"blank image", base(map[string]any{"image": "  "}), "must not be blank"},
		{"bad image", base(map[string]any{"image": "Not Valid!"}), "not a valid image reference"},
		{"not s3", base(map[string]any{"publish": "http://example.com/x"}), "not an S3 URL"},
		{"missing program", base(map[string]any{"entrypoint": []string{"no-such-program-osb"}}), "not available on this host"},
		{"bad probe", base(map[string]any{"readiness": map[string]any{"probe": "udp://x:1"}}), "must start with tcp:// or cmd://"},
		{"probe port", base(map[string]any{"readiness": map[string]any{"probe": "tcp://localhost:0"}}), "port from 1 to 65535"},
	}
	for _, tc := range failed {
		m := settledTemplate(t, c, createTemplate(t, c, tc.body))
		if msg, _ := m["status"].(map[string]any)["message"].(string); phaseOf(m) != "Failed" || !strings.Contains(msg, tc.check) {
			t.Errorf("%s: %v; want Failed with %q", tc.name, m["status"], tc.check)
		}
	}
}

func TestCreateFromTemplate(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := createTemplate(t, c, map[string]any{
		"image": "registry.example.com/team/app:1.2", "publish": "s3://bucket/p",
		"entrypoint": []string{"sh", "-c", `printf '%s' "$GREETING" > greeting; exec tail -f /dev/null`},
		"env":        map[string]string{"GREETING": "from the template"},
		"metadata":   map[string]string{"team": "ml", "tier": "base"},
	})
	settledTemplate(t, c, id)
	sid := c.expect(202, c.do("POST", "/sandboxes", map[string]any{"templateId": id, "timeout": 600,
		"metadata": map[string]string{"tier": "override", "run": "1"}})).json(t)["id"].(string)
	sb := c.expect(200, c.do("GET", "/sandboxes/"+sid, nil)).json(t)
	if sb["image"].(map[string]any)["uri"] != "registry.example.com/team/app:1.2" || len(sb["entrypoint"].([]any)) != 3 {
		t.Errorf("sandbox does not use the template: %v", sb)
	}
	if md := sb["metadata"].(map[string]any); md["team"] != "ml" || md["tier"] != "override" || md["run"] != "1" {
		t.Errorf("metadata %v", md)
	}
	runtime, _ := c.srv.Sandbox(sid)
	var got []byte
	if !eventually(t, 30*time.Second, func() bool {
		got, _ = runtime.FS().ReadFile("workspace/greeting")
		return string(got) == "from the template"
	}) {
		t.Errorf("entrypoint did not see the template env: %q", got)
	}

	// Template mode refuses what the template fixes, and unusable templates.
	cases := []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"with resources", map[string]any{"templateId": id, "resourceLimits": map[string]string{"cpu": "1"}}, 400, "INVALID_PARAMETER"},
		{"with entrypoint", map[string]any{"templateId": id, "entrypoint": []string{"sh"}}, 400, "INVALID_PARAMETER"},
		{"with image", map[string]any{"templateId": id, "image": map[string]string{"uri": "x"}, "entrypoint": []string{"sh"}}, 422, ""},
		{"unknown", map[string]any{"templateId": "tpl_nope"}, 404, "TEMPLATE_NOT_FOUND"},
	}
	bad := createTemplate(t, c, map[string]any{"image": "python:3.11", "publish": "s3://b", "entrypoint": []string{"no-such-program-osb"}})
	settledTemplate(t, c, bad)
	cases = append(cases, struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{"failed template", map[string]any{"templateId": bad}, 404, "FSB::TEMPLATE_NOT_FOUND"})
	for _, tc := range cases {
		r := c.do("POST", "/sandboxes", tc.body)
		if r.status != tc.status || !strings.HasSuffix(r.code(), tc.code) {
			t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
		}
	}
	if n := len(c.expect(200, c.do("GET", "/sandboxes", nil)).json(t)["items"].([]any)); n != 1 {
		t.Errorf("%d sandboxes, want 1", n)
	}
}
