package interop

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// policy is the network policy of the sandboxes these tests make.
var policy = map[string]any{
	"defaultAction": "deny",
	"egress":        []map[string]string{{"action": "allow", "target": "api.example.com"}},
}

func TestOfficialCLIEgress(t *testing.T) {
	h := start(t)
	tw := h.twins(t, map[string]any{"networkPolicy": policy})
	t.Run("get", func(t *testing.T) {
		off, _ := h.same(t, tw[0], cmp{args: args("egress", "get", "ID")})
		if got := render(off); got != `{"default_action":"deny","egress":[{"action":"allow","target":"api.example.com"}]}` {
			t.Errorf("official egress get: %s", got)
		}
	})
	t.Run("patch", func(t *testing.T) {
		h.compare(t, tw, cmp{label: "<SANDBOX>",
			args: args("egress", "patch", "ID", "--rule", "allow=pypi.org", "--rule", "deny=api.example.com")})
		off, _ := h.compare(t, tw, cmp{label: "<SANDBOX>", args: args("egress", "get", "ID")})
		// The sidecar puts the patch's rules first, then the old rules it did not replace.
		want := `{"default_action":"deny","egress":[{"action":"allow","target":"pypi.org"},{"action":"deny","target":"api.example.com"}]}`
		if got := render(off); got != want {
			t.Errorf("after the official patch: %s\nwant %s", got, want)
		}
	})
}

// A sandbox made from a template has no egress sidecar: the official CLI
// then reads and patches its policy through the lifecycle API.
func TestOfficialCLITemplates(t *testing.T) {
	h := start(t)
	var tpl string
	t.Run("create", func(t *testing.T) {
		h.compare(t, twin{}, cmp{
			args: args("template", "create", "-i", "python:3.11", "-p", "s3://bucket/publish", "--resource", "cpu=1",
				"--entrypoint", "tail", "--entrypoint", "-f", "--entrypoint", "/dev/null", "-m", "team=interop"),
			vary: map[string]string{"template_id": "each create makes a new template"},
		})
		out := h.officialOK(t, "template", "create", "-i", "python:3.11", "-p", "s3://bucket/publish", "-o", "json")
		var v struct {
			TemplateID string `json:"template_id"`
		}
		decodeInto(t, []byte(out), &v)
		tpl = v.TemplateID
	})
	if tpl == "" {
		t.Fatal("no template to go on with")
	}
	t.Run("get", func(t *testing.T) { h.same(t, tpl, cmp{args: args("template", "get", "ID")}) })
	t.Run("list", func(t *testing.T) { h.same(t, tpl, cmp{args: args("template", "list", "-m", "team=interop")}) })
	t.Run("create from file", func(t *testing.T) {
		req := filepath.Join(t.TempDir(), "template.json")
		os.WriteFile(req, []byte(`{"image":"python:3.11","publish":"s3://b/p","resourceLimits":{"cpu":"1"},"readiness":{"warmupSeconds":5}}`), 0o644)
		h.compare(t, twin{}, cmp{args: args("template", "create", "-f", req),
			vary: map[string]string{"template_id": "each create makes a new template"}})
	})

	t.Run("sandbox from template", func(t *testing.T) {
		h.compare(t, twin{}, cmp{args: args("sandbox", "create", "--template", tpl, "--timeout", "20m"),
			vary: map[string]string{"id": "each create makes a new sandbox"}})
		out := h.officialOK(t, "sandbox", "create", "--template", tpl, "--timeout", "20m", "-o", "json")
		var v struct{ ID string }
		decodeInto(t, []byte(out), &v)
		if got := h.sandboxState(t, v.ID); got != "Running" {
			t.Fatalf("server says the template sandbox is %q", got)
		}
	})
	t.Run("template sandbox", func(t *testing.T) {
		sb := h.sandbox(t, map[string]any{"templateId": tpl, "image": nil, "entrypoint": nil, "resourceLimits": nil})
		if got := h.sameRaw(t, "command", "run", sb, "--", "echo", "from template"); got != "from template\n" {
			t.Errorf("command in the template sandbox printed %q", got)
		}
		h.officialOK(t, "egress", "patch", sb, "--rule", "allow=example.org")
		off, _ := h.same(t, sb, cmp{args: args("egress", "get", "ID")})
		if got := render(off); got != `{"default_action":"deny","egress":[{"action":"allow","target":"example.org"}]}` {
			t.Errorf("official egress get after patch: %s", got)
		}
	})
	t.Run("delete", func(t *testing.T) {
		tpls := twin{tpl, newTemplate(t, h)}
		h.compare(t, tpls, cmp{args: args("template", "delete", "ID"), label: "<TEMPLATE>"})
		if status, _ := h.ours.API("GET", "/templates/"+tpl, nil); status != 404 {
			t.Errorf("GET the template after the official delete: %d", status)
		}
	})
}

func newTemplate(t *testing.T, h *harness) string {
	t.Helper()
	var v struct {
		TemplateID string `json:"template_id"`
	}
	decodeInto(t, []byte(h.ours.Must("template", "create", "-i", "python:3.11", "-p", "s3://b/p", "-o", "json")), &v)
	return v.TemplateID
}

func TestOfficialCLISnapshots(t *testing.T) {
	h := start(t)
	id := h.sandbox(t, nil)
	h.ours.Must("file", "write", id, "/workspace/kept.txt", "-c", "kept")
	var snap string
	t.Run("create", func(t *testing.T) {
		h.compare(t, twin{id, id}, cmp{args: args("snapshot", "create", "ID", "--name", "before"),
			vary: map[string]string{"id": "each create makes a new snapshot"}})
		out := h.officialOK(t, "snapshot", "create", id, "--name", "mine", "-o", "json")
		var v struct{ ID string }
		decodeInto(t, []byte(out), &v)
		snap = v.ID
	})
	if snap == "" {
		t.Fatal("no snapshot to go on with")
	}
	h.ready(t, snap)
	t.Run("get", func(t *testing.T) { h.same(t, snap, cmp{args: args("snapshot", "get", "ID")}) })
	t.Run("list", func(t *testing.T) {
		h.same(t, id, cmp{args: args("snapshot", "list", "--sandbox-id", "ID", "--name", "mine")})
		h.same(t, id, cmp{args: args("snapshot", "list", "--sandbox-id", "ID", "--state", "Ready")})
	})
	t.Run("restore", func(t *testing.T) {
		h.compare(t, twin{}, cmp{args: args("sandbox", "create", "--snapshot-id", snap),
			vary: map[string]string{"id": "each create makes a new sandbox"}})
		out := h.officialOK(t, "sandbox", "create", "--snapshot-id", snap, "-o", "json")
		var v struct{ ID string }
		decodeInto(t, []byte(out), &v)
		if got := h.ours.Must("file", "cat", v.ID, "/workspace/kept.txt"); got != "kept" {
			t.Errorf("restored sandbox holds %q", got)
		}
	})
	t.Run("delete", func(t *testing.T) {
		other := h.snapshot(t, id)
		h.compare(t, twin{snap, other}, cmp{args: args("snapshot", "delete", "ID"), label: "<SNAPSHOT>"})
		if status, _ := h.ours.API("GET", "/snapshots/"+snap, nil); status != 404 {
			t.Errorf("GET the snapshot after the official delete: %d", status)
		}
	})
}

// snapshot makes a snapshot through the API and waits until it is Ready.
func (h *harness) snapshot(t *testing.T, id string) string {
	t.Helper()
	status, out := h.ours.API("POST", "/sandboxes/"+id+"/snapshots", map[string]string{"name": "other"})
	if status != 202 {
		t.Fatalf("snapshot: %d %s", status, out)
	}
	var v struct{ ID string }
	decodeInto(t, out, &v)
	h.ready(t, v.ID)
	return v.ID
}

func (h *harness) ready(t *testing.T, snap string) {
	t.Helper()
	cmdtest.Eventually(t, "snapshot "+snap+" to be Ready", func() bool {
		var v struct{ Status struct{ State string } }
		h.ours.APIGet("/snapshots/"+snap, &v)
		return v.Status.State == "Ready"
	})
}
