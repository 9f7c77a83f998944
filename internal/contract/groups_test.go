package contract

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/osb-dev/osb/internal/client"
)

// createSandbox creates a running sandbox and returns its id.
func (h *harness) createSandbox(extra ...string) string {
	h.t.Helper()
	args := append([]string{"sandbox", "create", "-t", "30m", "-o", "json"}, extra...)
	if !slices.Contains(extra, "--template") {
		args = append(args, "-i", "python:3.11")
	}
	return idOf(h.t, h.run(0, args...).Stdout, "id")
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createSandbox()
	h.run(0, "command", "run", id, "--", "echo", "hi")
	h.run(3, "command", "run", id, "--", "sh", "-c", "echo out; echo err >&2; exit 3")
	h.run(0, "command", "run", id, "-o", "json", "-e", "A=1", "-w", "/tmp", "--", "sh", "-c", "echo $A")
	h.run(0, "command", "run", id, "--argv", "--", "printf", "%s", "a b")
	h.run(124, "command", "run", id, "-t", "1s", "--", "sleep", "10")
	exec := idOf(t, h.run(0, "command", "run", id, "-d", "-o", "json", "--", "sh", "-c", "echo one; sleep 0.2; echo two").Stdout, "execution_id")
	h.run(0, "command", "logs", id, exec, "-f", "-o", "raw")
	h.run(0, "command", "logs", id, exec, "-o", "json")
	h.run(0, "command", "logs", id, exec, "--cursor", "4", "-o", "json")
	h.run(0, "command", "status", id, exec, "-o", "json")
	long := idOf(t, h.run(0, "command", "run", id, "-d", "-o", "json", "--", "sleep", "30").Stdout, "execution_id")
	h.run(0, "command", "interrupt", id, long)
	h.run(4, "command", "status", id, "no-such-command")
	session := idOf(t, h.run(0, "command", "session", "create", id, "-w", "/tmp", "-o", "json").Stdout, "session_id")
	h.run(0, "command", "session", "run", id, session, "--", "cd", "/workspace")
	h.run(0, "command", "session", "run", id, session, "--", "pwd")
	h.run(0, "command", "session", "delete", id, session)
	h.run(4, "command", "session", "delete", id, session)
	h.run(0, "--use-server-proxy", "command", "run", id, "--", "true")
}

func TestFileTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createSandbox()
	local := writeFile(t, "data.bin", "\x00\xffbinary\n")
	dir := t.TempDir()
	h.run(0, "file", "write", id, "/workspace/a.txt", "-c", "hello world\n", "--mode", "644")
	h.run(0, "file", "cat", id, "/workspace/a.txt")
	h.run(0, "file", "upload", id, local, "/workspace/sub/data.bin")
	h.run(0, "file", "download", id, "/workspace/sub/data.bin", filepath.Join(dir, "copy.bin"))
	h.run(0, "file", "ls", id, "/workspace", "-o", "json")
	h.run(0, "file", "ls", id, "/workspace", "--depth", "2", "-l")
	h.run(0, "file", "info", id, "/workspace/a.txt", "/workspace/sub", "-o", "json")
	h.run(0, "file", "search", id, "/workspace", "-p", "*.txt", "-o", "json")
	h.run(0, "file", "replace", id, "/workspace/a.txt", "--old", "world", "--new", "there")
	h.run(0, "file", "chmod", id, "/workspace/a.txt", "--mode", "600")
	h.run(0, "file", "mv", id, "/workspace/a.txt", "/workspace/b.txt")
	h.run(0, "file", "mkdir", id, "/workspace/x/y", "/workspace/z", "--mode", "755")
	h.run(0, "file", "rm", id, "/workspace/b.txt")
	h.run(0, "file", "rmdir", id, "/workspace/x", "/workspace/z")
	h.run(4, "file", "cat", id, "/workspace/missing.txt")
	h.run(4, "file", "info", id, "/workspace/missing.txt")
	h.run(0, "--use-server-proxy", "file", "cat", id, "/workspace/sub/data.bin")
}

func TestEgressTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	policy := writeFile(t, "policy.json", `{"defaultAction":"deny","egress":[{"action":"allow","target":"pypi.org"}]}`)
	id := h.createSandbox("--network-policy-file", policy)
	h.run(0, "egress", "get", id, "-o", "json")
	h.run(0, "egress", "patch", id, "--rule", "allow=github.com", "--rule", "deny=*.example.com", "-o", "json")
	h.run(0, "egress", "delete", id, "--target", "github.com")
	h.run(0, "--use-server-proxy", "egress", "get", id)
	h.run(0, "sandbox", "endpoint", id, "-p", "18080", "-o", "json")

	// Sidecar routes no osb command calls: the lifecycle server's PUT
	// /networkpolicy replaces the policy through PUT /policy.
	base := h.endpointOf(client.PortEgress)
	h.probe(http.MethodGet, base+"/healthz", "", http.StatusOK)
	h.probe(http.MethodPut, base+"/policy", `{"defaultAction":"deny","egress":[{"action":"allow","target":"pypi.org"}]}`, http.StatusOK)
	h.probe(http.MethodPost, base+"/policy", `{"defaultAction":"allow"}`, http.StatusOK)
	h.probe(http.MethodPut, base+"/policy", `{"defaultAction":"sometimes"}`, http.StatusBadRequest)
}

func TestCredentialVaultTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	policy := writeFile(t, "policy.json", `{"defaultAction":"deny","egress":[{"action":"allow","target":"api.example.com"}]}`)
	id := h.createSandbox("--network-policy-file", policy, "--credential-proxy")
	payload := writeFile(t, "vault.yaml", `credentials:
  - name: token
    source: {type: inline, value: s3cret-value}
bindings:
  - name: api
    match: {hosts: [api.example.com]}
    auth: {type: bearer, credential: token}
`)
	patch := writeFile(t, "patch.json", `{"expectedRevision": 1, "credentials": {"add": [{"name": "other", "source": {"type": "inline", "value": "x"}}]}}`)
	h.run(4, "credential-vault", "get", id)
	h.run(0, "credential-vault", "create", id, "--file", payload, "-o", "json")
	h.run(0, "credential-vault", "get", id, "-o", "json")
	h.run(0, "credential-vault", "patch", id, "--file", patch, "-o", "json")
	h.run(0, "credential-vault", "credential", "list", id, "-o", "json")
	h.run(0, "credential-vault", "credential", "get", id, "token", "-o", "json")
	h.run(0, "credential-vault", "binding", "list", id, "-o", "json")
	h.run(0, "credential-vault", "binding", "get", id, "api", "-o", "json")
	h.run(0, "credential-vault", "delete", id)
	// Without Credential Proxy the sidecar refuses.
	plain := h.createSandbox()
	h.run(1, "credential-vault", "create", plain, "--file", payload)
}

func TestDiagnosticsTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createSandbox()
	h.run(0, "diagnostics", "logs", id, "--scope", "container")
	h.run(0, "diagnostics", "logs", id, "-s", "all", "-o", "json")
	h.run(0, "diagnostics", "events", id, "--scope", "runtime", "-o", "json")
	h.run(1, "diagnostics", "events", id, "--scope", "no-such-scope")
	h.run(0, "devops", "logs", id, "-n", "5", "--since", "10m")
	h.run(0, "devops", "events", id, "-l", "5")
	h.run(0, "devops", "inspect", id)
	h.run(0, "devops", "summary", id, "-n", "5", "--event-limit", "3")
}

func TestSnapshotAndTemplateTraffic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createSandbox()
	snap := idOf(t, h.run(0, "snapshot", "create", id, "--name", "first", "--wait", "-o", "json").Stdout, "id")
	h.run(0, "snapshot", "get", snap, "-o", "json")
	h.run(0, "snapshot", "list", "--sandbox-id", id, "--name", "first", "--page", "1", "--page-size", "10", "-o", "json")
	h.run(0, "sandbox", "create", "--snapshot-id", snap, "-t", "10m", "-o", "json")
	h.run(0, "snapshot", "delete", snap)
	h.run(4, "snapshot", "get", snap)

	tpl := idOf(t, h.run(0, "template", "create", "-i", "python:3.11", "-p", "s3://bucket/templates",
		"--entrypoint", "sleep", "--entrypoint", "infinity", "-m", "team=contract", "-o", "json").Stdout, "template_id")
	h.waitTemplate(tpl)
	h.run(0, "template", "list", "-m", "team=contract", "-o", "json")
	fromTpl := h.createSandbox("--template", tpl)
	h.run(0, "egress", "get", fromTpl, "-o", "json")
	h.run(0, "egress", "patch", fromTpl, "--rule", "allow=pypi.org")
	h.run(0, "egress", "delete", fromTpl, "--target", "pypi.org")
	h.run(0, "template", "delete", tpl)
	h.run(4, "template", "get", tpl)
}

// waitTemplate polls a template until its check is over.
func (h *harness) waitTemplate(id string) {
	h.t.Helper()
	for range 200 {
		out := h.run(0, "template", "get", id, "-o", "json").Stdout
		var v struct {
			Status struct{ Phase string } `json:"status"`
		}
		json.Unmarshal([]byte(out), &v)
		switch v.Status.Phase {
		case "Succeeded":
			return
		case "Failed":
			h.t.Fatalf("template %s failed: %s", id, out)
		}
	}
	h.t.Fatalf("template %s never finished its check", id)
}
