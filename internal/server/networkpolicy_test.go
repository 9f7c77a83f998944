//go:build linux

package server_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

var startPolicy = map[string]any{"defaultAction": "deny", "egress": []any{
	map[string]any{"action": "allow", "target": "pypi.org"},
	map[string]any{"action": "deny", "target": "*.bad.org"},
}}

// policyOf returns the policy in a PolicyStatusResponse, compact.
func policyOf(t *testing.T, r response) string {
	t.Helper()
	var st struct{ Policy json.RawMessage }
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	var b bytes.Buffer
	json.Compact(&b, st.Policy)
	return b.String()
}

func TestCreateSeedsTheEgressSidecar(t *testing.T) {
	t.Parallel()
	var log cmdtest.SyncBuffer
	c := newClient(t, func(o *server.Options) { o.NoIsolation = true; o.Log = &log })
	id := c.create(map[string]any{"networkPolicy": startPolicy})
	if want := "sandbox " + id + ": egress policy stored (default deny, 2 rule(s)); NOT enforced"; !strings.Contains(log.String(), want) {
		t.Errorf("the log does not say %q:\n%s", want, log.String())
	}
	for _, proxy := range []bool{false, true} {
		r := c.expect(200, c.dataDo(c.endpoint(id, server.EgressPort, proxy), "GET", "/policy"))
		if got := policyOf(t, r); got != `{"defaultAction":"deny","egress":[{"action":"allow","target":"pypi.org"},{"action":"deny","target":"*.bad.org"}]}` {
			t.Errorf("proxy=%v seeded policy %s", proxy, got)
		}
		if !strings.Contains(string(r.body), `"enforcementMode":"none"`) {
			t.Errorf("the sidecar does not say it enforces nothing: %s", r.body)
		}
	}
	// No credentialProxy at create: the vault refuses writes, as a sidecar without MITM does.
	e := c.endpoint(id, server.EgressPort, false)
	if r := c.do("POST", "http://"+e.Endpoint+"/credential-vault", `{"credentials":[],"bindings":[]}`); r.status != 412 {
		t.Errorf("vault without credentialProxy: %d %s", r.status, r.body)
	}
	// Without networkPolicy the sidecar starts allow-all.
	plain := c.create(nil)
	r := c.expect(200, c.dataDo(c.endpoint(plain, server.EgressPort, false), "GET", "/policy"))
	if got := policyOf(t, r); got != `{"defaultAction":"allow","egress":[]}` {
		t.Errorf("default policy %s", got)
	}
	// With credentialProxy the vault accepts writes.
	withProxy := c.create(map[string]any{"networkPolicy": startPolicy, "credentialProxy": map[string]any{"enabled": true}})
	e = c.endpoint(withProxy, server.EgressPort, false)
	c.expect(201, c.do("POST", "http://"+e.Endpoint+"/credential-vault", `{"credentials":[],"bindings":[]}`))
	c.expect(200, c.do("PATCH", "/sandboxes/"+id+"/networkpolicy", `[{"action":"allow","target":"x.org"}]`))
	for _, want := range []string{
		"sandbox " + id + ": egress policy patched with 1 rule(s): default deny, 3 rule(s), mode enforcing (not enforced by the local runtime)",
		"sandbox " + withProxy + ": credential vault created (revision 1, 0 credential(s), 0 binding(s)); stored only: the local runtime injects no credentials",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, log.String())
		}
	}
}

func TestCreateValidatesEgressFields(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	for _, bad := range []map[string]any{
		{"networkPolicy": "deny"},
		{"networkPolicy": map[string]any{"defaultAction": "block"}},
		{"networkPolicy": map[string]any{"egress": []any{map[string]any{"action": "allow"}}}},
		{"networkPolicy": map[string]any{"egress": []any{map[string]any{"action": "allow", "target": 1}}}},
		{"networkPolicy": map[string]any{"rules": []any{}}},
		{"credentialProxy": map[string]any{"enabled": "yes"}},
	} {
		c.expect(422, c.do("POST", "/sandboxes", createBody(bad)))
	}
	for _, bad := range []map[string]any{
		{"networkPolicy": map[string]any{"egress": []any{map[string]any{"action": "allow", "target": " "}}}},
		{"credentialProxy": map[string]any{"enabled": true}},
	} {
		if r := c.expect(400, c.do("POST", "/sandboxes", createBody(bad))); r.code() != "SANDBOX::INVALID_PARAMETER" {
			t.Errorf("code %s", r.body)
		}
	}
	if ids := c.listIDs(); len(ids) != 0 {
		t.Errorf("rejected creates left sandboxes %v", ids)
	}
}

func (c *client) listIDs() []string {
	var list struct{ Items []struct{ ID string } }
	json.Unmarshal(c.expect(200, c.do("GET", "/sandboxes", nil)).body, &list)
	var ids []string
	for _, it := range list.Items {
		ids = append(ids, it.ID)
	}
	return ids
}

func TestNetworkPolicyRouteReachesTheSidecar(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := c.create(map[string]any{"networkPolicy": startPolicy})
	path := "/sandboxes/" + id + "/networkpolicy"
	// The control plane needs only the API key, never the endpoint token.
	c.expect(200, c.do("PATCH", path, `[{"action":"deny","target":"pypi.org"},{"action":"allow","target":"files.pythonhosted.org"}]`))
	want := `{"defaultAction":"deny","egress":[{"action":"deny","target":"pypi.org"},{"action":"allow","target":"files.pythonhosted.org"},{"action":"deny","target":"*.bad.org"}]}`
	if got := policyOf(t, c.expect(200, c.do("GET", path, nil))); got != want {
		t.Errorf("after patch %s", got)
	}
	e := c.endpoint(id, server.EgressPort, false)
	if got := policyOf(t, c.expect(200, c.dataDo(e, "GET", "/policy"))); got != want {
		t.Errorf("the sidecar holds %s", got)
	}
	c.expect(200, c.do("DELETE", path, `["*.bad.org"]`))
	c.expect(200, c.do("PUT", path, `{"defaultAction":"allow"}`))
	if got := policyOf(t, c.expect(200, c.do("GET", path, nil))); got != `{"defaultAction":"allow","egress":[]}` {
		t.Errorf("after put %s", got)
	}
	// Shapes are checked by the lifecycle server (422), content by the sidecar (400, text).
	c.expect(422, c.do("PATCH", path, `[{"action":"maybe","target":"x.org"}]`))
	c.expect(422, c.do("DELETE", path, `"x.org"`))
	c.expect(422, c.do("PATCH", path, ""))
	if r := c.expect(400, c.do("PATCH", path, `[]`)); !strings.Contains(string(r.body), "empty array") {
		t.Errorf("empty patch: %s", r.body)
	}
	c.expect(404, c.do("GET", "/sandboxes/nope/networkpolicy", nil))
	c.key = ""
	c.expect(401, c.do("GET", path, nil))
}

func TestTemplateSandboxKeepsPolicyOnTheControlPlane(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	tpl := c.expect(201, c.do("POST", "/templates", map[string]any{"image": "python:3.11", "publish": "s3://bucket/tpl"})).json(t)["templateId"].(string)
	if !eventually(t, 30*time.Second, func() bool {
		return strings.Contains(string(c.do("GET", "/templates/"+tpl, nil).body), `"Succeeded"`)
	}) {
		t.Fatal("template never succeeded")
	}
	id := c.expect(202, c.do("POST", "/sandboxes", map[string]any{"templateId": tpl, "timeout": 600, "networkPolicy": startPolicy})).json(t)["id"].(string)
	r := c.expect(200, c.do("GET", "/sandboxes/"+id+"/endpoints/44772", nil))
	if got := r.header.Get("OPEN-SANDBOX-ORIGIN"); got != "template" {
		t.Errorf("execd endpoint origin %q", got)
	}
	if r := c.dataDo(c.endpoint(id, server.EgressPort, false), "GET", "/policy"); r.status != 404 {
		t.Errorf("a template sandbox has a sidecar: %d %s", r.status, r.body)
	}
	path := "/sandboxes/" + id + "/networkpolicy"
	// In-place merge: pypi.org keeps its position, the new target goes last.
	c.expect(200, c.do("PATCH", path, `[{"action":"deny","target":"pypi.org"},{"action":"allow","target":"x.org"},{"action":"deny","target":"x.org"}]`))
	r = c.expect(200, c.do("GET", path, nil))
	if got := policyOf(t, r); got != `{"defaultAction":"deny","egress":[{"action":"deny","target":"pypi.org"},{"action":"deny","target":"*.bad.org"},{"action":"allow","target":"x.org"}]}` {
		t.Errorf("intent after patch %s", got)
	}
	if !strings.Contains(string(r.body), `"enforcementMode":"none"`) {
		t.Errorf("intent status %s", r.body)
	}
	c.expect(200, c.do("DELETE", path, `["X.org","nope.org"]`))
	c.expect(200, c.do("DELETE", path, `["x.org"]`))
	if got := policyOf(t, c.expect(200, c.do("GET", path, nil))); got != `{"defaultAction":"deny","egress":[{"action":"deny","target":"pypi.org"},{"action":"deny","target":"*.bad.org"}]}` {
		t.Errorf("intent after delete %s", got)
	}
	if r := c.expect(400, c.do("PATCH", path, `[{"action":"allow","target":" "}]`)); r.code() != "SANDBOX::INVALID_PARAMETER" {
		t.Errorf("blank target %s", r.body)
	}
	c.expect(200, c.do("PUT", path, `{"egress":[{"action":"allow","target":"a.org"}]}`))
	if got := policyOf(t, c.expect(200, c.do("GET", path, nil))); got != `{"defaultAction":"deny","egress":[{"action":"allow","target":"a.org"}]}` {
		t.Errorf("intent after put %s", got)
	}
}
