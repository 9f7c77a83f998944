//go:build linux

package server_test

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/sandbox"
	"github.com/osb-dev/osb/internal/server/servertest"
)

func TestHealthAndVersionNeedNoKey(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	c.key = ""
	for _, path := range []string{"/health", "/v1/health"} {
		r := c.expect(200, c.do("GET", c.srv.URL()+path, nil))
		if r.json(t)["status"] != "healthy" {
			t.Errorf("%s: %s", path, r.body)
		}
	}
	if r := c.expect(200, c.do("GET", c.srv.URL()+"/version", nil)); r.json(t)["version"] == "" {
		t.Errorf("version: %s", r.body)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	c.key = ""
	if r := c.expect(401, c.do("GET", "/sandboxes", nil)); r.code() != "MISSING_API_KEY" {
		t.Errorf("missing key: %s", r.body)
	}
	c.key = "wrong"
	if r := c.expect(401, c.do("GET", "/sandboxes", nil)); r.code() != "INVALID_API_KEY" {
		t.Errorf("wrong key: %s", r.body)
	}
	// Routes without /v1 are guarded too; the proxy route is exempt (404 for an unknown id, not 401).
	c.expect(401, c.do("GET", c.srv.URL()+"/sandboxes", nil))
	c.expect(404, c.do("GET", c.srv.URL()+"/sandboxes/nope/proxy/44772/ping", nil))
	// An id with escaped slashes that spell the proxy route is still a
	// lifecycle request, and still needs the key.
	keyed, anon := *c, *c
	keyed.key, anon.key = servertest.APIKey, ""
	id := keyed.create(nil)
	for _, r := range []struct{ method, path string }{
		{"DELETE", "/sandboxes/x%2Fproxy%2F1"},
		{"DELETE", "/sandboxes/" + id + "%2Fproxy%2F44772"},
		{"GET", "/sandboxes/x%2Fproxy%2F1/endpoints/44772"},
		{"POST", "/sandboxes/x%2Fproxy%2F1/pause"},
	} {
		if got := anon.do(r.method, r.path, nil); got.status != 401 || got.code() != "MISSING_API_KEY" {
			t.Errorf("%s %s without a key: %d %s", r.method, r.path, got.status, got.body)
		}
	}
	keyed.expect(200, keyed.do("GET", "/sandboxes/"+id, nil))
	// No key configured: no auth at all.
	open := newClient(t, func(o *server.Options) { o.APIKey = "" })
	open.key = ""
	open.expect(200, open.do("GET", "/sandboxes", nil))
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	r := c.do("GET", "/sandboxes", nil, "X-Request-ID", "my-id-1")
	if got := r.header.Get("X-Request-ID"); got != "my-id-1" {
		t.Errorf("echoed %q", got)
	}
	c.key = ""
	for _, r := range []response{c.do("GET", "/sandboxes", nil), c.do("GET", c.srv.URL()+"/nope", nil)} {
		if len(r.header.Get("X-Request-ID")) != 36 {
			t.Errorf("status %d: generated id %q", r.status, r.header.Get("X-Request-ID"))
		}
	}
}

func TestUnknownRouteIsJSON(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	if r := c.expect(404, c.do("GET", "/nope", nil)); r.code() != "NOT_FOUND" {
		t.Errorf("body %s", r.body)
	}
	if r := c.expect(405, c.do("PUT", "/sandboxes", nil)); r.code() != "METHOD_NOT_ALLOWED" {
		t.Errorf("body %s", r.body)
	}
}

func TestCreateGetDelete(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	r := c.expect(202, c.do("POST", "/sandboxes", createBody(map[string]any{"metadata": map[string]string{"name": "demo"}})))
	m := r.json(t)
	id := m["id"].(string)
	if len(id) != 32 || strings.ToLower(id) != id {
		t.Errorf("id %q", id)
	}
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v1/sandboxes/"+id) {
		t.Errorf("Location %q", loc)
	}
	status := m["status"].(map[string]any)
	if status["state"] != "Running" || !strings.Contains(status["message"].(string), "image not pulled") {
		t.Errorf("status %v", status)
	}
	for _, k := range []string{"createdAt", "expiresAt", "entrypoint", "metadata"} {
		if m[k] == nil {
			t.Errorf("create response lacks %s: %s", k, r.body)
		}
	}
	if _, ok := m["image"]; ok {
		t.Errorf("create response has image: %s", r.body)
	}
	if _, ok := m["platform"]; ok {
		t.Errorf("platform should be left out when the request named none: %s", r.body)
	}
	got := c.expect(200, c.do("GET", "/sandboxes/"+id, nil)).json(t)
	if got["image"].(map[string]any)["uri"] != "python:3.11" || got["metadata"].(map[string]any)["name"] != "demo" {
		t.Errorf("get: %v", got)
	}
	// Routes without /v1 work too.
	c.expect(200, c.do("GET", c.srv.URL()+"/sandboxes/"+id, nil))
	c.expect(204, c.do("DELETE", "/sandboxes/"+id, nil))
	if r := c.expect(404, c.do("DELETE", "/sandboxes/"+id, nil)); r.code() != "DOCKER::SANDBOX_NOT_FOUND" {
		t.Errorf("second delete: %s", r.body)
	}
	c.expect(404, c.do("GET", "/sandboxes/"+id, nil))
}

func TestManualCleanupHasNoExpiry(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, timeout := range []any{nil, "null"} {
		body := createBody(map[string]any{"timeout": nil})
		if timeout != nil {
			body["timeout"] = nil // explicit null
		}
		m := c.expect(202, c.do("POST", "/sandboxes", body)).json(t)
		if _, ok := m["expiresAt"]; ok {
			t.Errorf("expiresAt present: %v", m)
		}
		r := c.do("POST", "/sandboxes/"+m["id"].(string)+"/renew-expiration",
			map[string]string{"expiresAt": time.Now().Add(time.Hour).Format(time.RFC3339)})
		if c.expect(409, r); r.code() != "DOCKER::INVALID_EXPIRATION" {
			t.Errorf("renew manual: %s", r.body)
		}
	}
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	cases := []struct {
		name   string
		body   any
		status int
		check  string // a substring of the body
	}{
		{"timeout below 60", createBody(map[string]any{"timeout": 30}), 422, `"loc":["body","timeout"]`},
		{"timeout not int", createBody(map[string]any{"timeout": "abc"}), 422, `"int_parsing"`},
		{"malformed json", `{"image":`, 422, `"json_invalid"`},
		{"not an object", `[1]`, 422, `"detail"`},
		{"no resourceLimits", createBody(map[string]any{"resourceLimits": nil}), 422, `"loc":["body","resourceLimits"]`},
		{"empty entrypoint", createBody(map[string]any{"entrypoint": []string{}}), 422, `"too_short"`},
		{"no entrypoint", createBody(map[string]any{"entrypoint": nil}), 422, `"loc":["body","entrypoint"]`},
		{"image and snapshot", createBody(map[string]any{"snapshotId": "s1"}), 422, `"value_error"`},
		{"neither image nor snapshot", createBody(map[string]any{"image": nil}), 422, `"value_error"`},
		{"image extra field", createBody(map[string]any{"image": map[string]any{"uri": "x", "tag": "y"}}), 422, `"extra_forbidden"`},
		{"bad label key", createBody(map[string]any{"metadata": map[string]string{"bad key!": "v"}}), 400, `bad key!`},
		{"reserved prefix", createBody(map[string]any{"metadata": map[string]string{"opensandbox.io/x": "v"}}), 400, `opensandbox.io/x`},
		{"long value", createBody(map[string]any{"metadata": map[string]string{"k": strings.Repeat("a", 64)}}), 400, `SANDBOX::INVALID_METADATA_LABEL`},
		{"unknown snapshot", createBody(map[string]any{"image": nil, "entrypoint": nil, "snapshotId": "snap-x"}), 404, `"SNAPSHOT::NOT_FOUND"`},
		{"volume without mountPath", createBody(map[string]any{"volumes": []any{map[string]any{"name": "v"}}}), 422, `"loc":["body","volumes",0,"mountPath"]`},
		{"volume name pattern", createBody(map[string]any{"volumes": []any{map[string]any{"name": "V_1", "mountPath": "/d", "pvc": map[string]any{"claimName": "c"}}}}), 422, `"string_pattern_mismatch"`},
		{"volume with two backends", createBody(map[string]any{"volumes": []any{map[string]any{"name": "v", "mountPath": "/d", "pvc": map[string]any{"claimName": "c"}, "host": map[string]any{"path": "/srv"}}}}), 422, `but multiple were provided`},
		{"duplicate volume names", createBody(map[string]any{"volumes": []any{map[string]any{"name": "v", "mountPath": "/d", "pvc": map[string]any{"claimName": "c"}}, map[string]any{"name": "v", "mountPath": "/e", "pvc": map[string]any{"claimName": "c"}}}}), 400, `VOLUME::DUPLICATE_NAME`},
		{"host volume, none allowed", createBody(map[string]any{"volumes": []any{map[string]any{"name": "v", "mountPath": "/d", "host": map[string]any{"path": "/srv"}}}}), 400, `Allowed prefixes: []`},
		{"ossfs volume", createBody(map[string]any{"volumes": []any{map[string]any{"name": "v", "mountPath": "/d", "ossfs": map[string]any{"bucket": "b"}}}}), 400, `VOLUME::UNSUPPORTED_BACKEND`},
		{"foreign platform", createBody(map[string]any{"platform": map[string]string{"os": "windows", "arch": "amd64"}}), 400, `cannot be satisfied`},
	}
	for _, tc := range cases {
		r := c.do("POST", "/sandboxes", tc.body)
		if r.status != tc.status || !strings.Contains(string(r.body), tc.check) {
			t.Errorf("%s: %d %s; want %d containing %s", tc.name, r.status, r.body, tc.status, tc.check)
		}
	}
	// Unknown top-level fields are tolerated; a label with a DNS prefix is fine.
	c.create(map[string]any{"futureField": 1, "metadata": map[string]string{"example.com/team": "a.b-c_d", "empty": ""}})
	if n := len(c.expect(200, c.do("GET", "/sandboxes", nil)).json(t)["items"].([]any)); n != 1 {
		t.Errorf("%d sandboxes left, want 1 (failed creates must leave nothing)", n)
	}
}

func TestListFiltersAndPages(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	a := c.create(map[string]any{"metadata": map[string]string{"team": "a", "env": "dev"}})
	b := c.create(map[string]any{"metadata": map[string]string{"team": "b", "env": "dev"}})
	d := c.create(map[string]any{"metadata": map[string]string{"team": "a", "env": "prod"}})
	c.expect(202, c.do("POST", "/sandboxes/"+b+"/pause", nil))
	ids := func(query string) string {
		t.Helper()
		r := c.expect(200, c.do("GET", "/sandboxes"+query, nil)).json(t)
		var out []string
		for _, it := range r["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return strings.Join(out, ",")
	}
	meta := func(s string) string { return "?metadata=" + url.QueryEscape(s) }
	checks := map[string]string{
		"":                               a + "," + b + "," + d,
		"?state=Running":                 a + "," + d,
		"?state=Running&state=Paused":    a + "," + b + "," + d,
		"?state=Paused":                  b,
		meta("team=a"):                   a + "," + d,
		meta("team=a&env=dev"):           a,
		meta("team=a") + "&state=Paused": "",
		"?pageSize=2":                    a + "," + b,
		"?pageSize=2&page=2":             d,
		"?pageSize=2&page=3":             "",
	}
	for q, want := range checks {
		if got := ids(q); got != want {
			t.Errorf("list %s = %s, want %s", q, got, want)
		}
	}
	p := c.expect(200, c.do("GET", "/sandboxes?pageSize=2", nil)).json(t)["pagination"].(map[string]any)
	if p["page"] != 1.0 || p["pageSize"] != 2.0 || p["totalItems"] != 3.0 || p["totalPages"] != 2.0 || p["hasNextPage"] != true {
		t.Errorf("pagination %v", p)
	}
	for _, q := range []string{"?pageSize=201", "?pageSize=0", "?page=0", "?page=x"} {
		if r := c.do("GET", "/sandboxes"+q, nil); r.status != 422 || !strings.Contains(string(r.body), `"detail"`) {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}
	if r := c.expect(400, c.do("GET", "/sandboxes"+meta("team"), nil)); r.code() != "INVALID_METADATA_FORMAT" {
		t.Errorf("malformed metadata: %s", r.body)
	}
}

func TestListBeyond200(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	const n = 205
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c.create(map[string]any{"timeout": nil, "entrypoint": []string{"true"}})
		})
	}
	wg.Wait()
	var seen []string
	var created []string
	for page := 1; ; page++ {
		r := c.expect(200, c.do("GET", fmt.Sprintf("/sandboxes?pageSize=200&page=%d", page), nil)).json(t)
		for _, it := range r["items"].([]any) {
			seen = append(seen, it.(map[string]any)["id"].(string))
			created = append(created, it.(map[string]any)["createdAt"].(string))
		}
		if r["pagination"].(map[string]any)["hasNextPage"] != true {
			break
		}
	}
	if len(seen) != n {
		t.Fatalf("listed %d, want %d", len(seen), n)
	}
	for i := 1; i < len(created); i++ {
		if created[i] < created[i-1] {
			t.Fatalf("not ordered by creation: %s before %s", created[i-1], created[i])
		}
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id := c.create(nil)
	e := c.endpoint(id, 44772, false)
	if r := c.expect(409, c.do("POST", "/sandboxes/"+id+"/resume", nil)); r.code() != "DOCKER::SANDBOX_NOT_PAUSED" {
		t.Errorf("resume running: %s", r.body)
	}
	c.expect(202, c.do("POST", "/sandboxes/"+id+"/pause", nil))
	if st := c.state(id); st != "Paused" {
		t.Fatalf("state %s", st)
	}
	sb, _ := c.srv.Sandbox(id)
	for _, pid := range sb.PIDs() {
		if st := procState(pid); st != "T" && st != "t" {
			t.Errorf("pid %d state %s, want stopped", pid, st)
		}
	}
	if r := c.expect(409, c.do("POST", "/sandboxes/"+id+"/pause", nil)); r.code() != "DOCKER::SANDBOX_NOT_RUNNING" {
		t.Errorf("pause paused: %s", r.body)
	}
	if r := c.dataDo(e, "GET", "/ping"); r.status != 409 || r.code() != "DOCKER::SANDBOX_NOT_RUNNING" {
		t.Errorf("data plane while paused: %d %s", r.status, r.body)
	}
	c.expect(202, c.do("POST", "/sandboxes/"+id+"/resume", nil))
	if st := c.state(id); st != "Running" {
		t.Fatalf("state %s", st)
	}
	c.expect(200, c.dataDo(e, "GET", "/ping"))
	c.expect(404, c.do("POST", "/sandboxes/nope/pause", nil))
}

func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

func TestRenewExpiration(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id := c.create(nil)
	at := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	r := c.expect(200, c.do("POST", "/sandboxes/"+id+"/renew-expiration", map[string]string{"expiresAt": at.Format(time.RFC3339)}))
	got, err := time.Parse(time.RFC3339Nano, r.json(t)["expiresAt"].(string))
	if err != nil || !got.Equal(at) || len(r.json(t)) != 1 {
		t.Errorf("renew response %s", r.body)
	}
	past := time.Now().Add(-time.Minute).Format(time.RFC3339)
	if r := c.expect(400, c.do("POST", "/sandboxes/"+id+"/renew-expiration", map[string]string{"expiresAt": past})); !strings.HasSuffix(r.code(), "::INVALID_EXPIRATION") {
		t.Errorf("past: %s", r.body)
	}
	c.expect(422, c.do("POST", "/sandboxes/"+id+"/renew-expiration", map[string]string{}))
	c.expect(422, c.do("POST", "/sandboxes/"+id+"/renew-expiration", map[string]string{"expiresAt": "tomorrow"}))
	c.expect(404, c.do("POST", "/sandboxes/nope/renew-expiration", map[string]string{"expiresAt": at.Format(time.RFC3339)}))
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	c := newClient(t, func(o *server.Options) { o.MinTimeout = time.Second })
	// kept would expire before gone if its renewal did not count. The
	// renewal must land before kept expires: on a machine too slow for
	// that (404), both get twice the time, and the test goes on.
	kept, timeout := "", 3
	for ; ; timeout *= 2 {
		kept = c.create(map[string]any{"timeout": timeout})
		r := c.do("POST", "/sandboxes/"+kept+"/renew-expiration",
			map[string]string{"expiresAt": time.Now().Add(time.Hour).Format(time.RFC3339Nano)})
		if r.status == 200 || timeout > 60 {
			c.expect(200, r)
			break
		}
		c.expect(404, r)
	}
	gone := c.create(map[string]any{"timeout": timeout + 1})
	sb, ok := c.srv.Sandbox(gone)
	if !ok {
		t.Fatal("expired too early")
	}
	pids, dir := sb.PIDs(), sb.Dir()
	if !eventually(t, time.Duration(timeout)*time.Second+time.Minute, func() bool { return c.do("GET", "/sandboxes/"+gone, nil).status == 404 }) {
		t.Fatal("sandbox did not expire")
	}
	assertGone(t, pids, dir)
	c.expect(200, c.do("GET", "/sandboxes/"+kept, nil))
	// The real minimum holds by default.
	def := newClient(t)
	def.expect(422, def.do("POST", "/sandboxes", createBody(map[string]any{"timeout": 59})))
}

func TestPatchMetadata(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id := c.create(map[string]any{"metadata": map[string]string{"a": "1", "b": "2"}})
	r := c.expect(200, c.do("PATCH", "/sandboxes/"+id+"/metadata", map[string]any{"a": nil, "c": "3", "zz": nil}))
	got := r.json(t)["metadata"].(map[string]any)
	if len(got) != 2 || got["b"] != "2" || got["c"] != "3" {
		t.Errorf("metadata %v", got)
	}
	c.expect(200, c.do("PATCH", "/sandboxes/"+id+"/metadata", map[string]any{}))
	if r := c.expect(400, c.do("PATCH", "/sandboxes/"+id+"/metadata", map[string]any{"Bad Key": "x"})); !strings.Contains(string(r.body), "Bad Key") {
		t.Errorf("bad key: %s", r.body)
	}
	c.expect(422, c.do("PATCH", "/sandboxes/"+id+"/metadata", map[string]any{"n": 1}))
	c.expect(404, c.do("PATCH", "/sandboxes/nope/metadata", map[string]any{"a": "1"}))
}

// assertGone checks that no process of pids lives on and dir is deleted.
func assertGone(t *testing.T, pids []int, dir string) {
	t.Helper()
	if len(pids) == 0 {
		t.Error("no pids recorded")
	}
	for _, pid := range pids {
		if st := procState(pid); st != "" && st != "Z" {
			t.Errorf("pid %d still alive (state %s)", pid, st)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists (%v)", dir, err)
	}
}

func TestDeleteKillsProcessesAndFiles(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	id := c.create(nil)
	sb, _ := c.srv.Sandbox(id)
	cmd, err := sb.Command(t.Context(), sandbox.CommandSpec{Shell: "echo hello > /workspace/hello.txt; setsid sleep 300 >/dev/null 2>&1 &"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if b, err := sb.FS().ReadFile("workspace/hello.txt"); err != nil || string(b) != "hello\n" {
		t.Fatalf("file via FS: %q %v", b, err)
	}
	var pids []int
	if !eventually(t, time.Minute, func() bool { pids = sb.PIDs(); return len(pids) >= 3 }) {
		t.Fatalf("the sandbox's processes: %v, want 3 or more", pids)
	}
	c.expect(204, c.do("DELETE", "/sandboxes/"+id, nil))
	assertGone(t, pids, sb.Dir())
}

func TestCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, srv: srv, base: srv.URL() + "/v1"}
	var pids []int
	var endpoints []endpoint
	for range 2 {
		id := c.create(nil)
		sb, _ := srv.Sandbox(id)
		pids = append(pids, sb.PIDs()...)
		endpoints = append(endpoints, c.endpoint(id, 44772, false))
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pids, srv.DataDir())
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, addr := range []string{srv.Addr(), endpoints[0].Endpoint, endpoints[1].Endpoint} {
		if conn, err := dialTimeout(addr); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections", addr)
		}
	}
}
