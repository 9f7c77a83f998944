//go:build linux

package sandbox_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
)

// `sandbox create --volumes-file` end to end: a host directory and a named
// volume mounted in the sandbox, seen by commands and the files API; a host
// directory outside the allowed prefix refused with the server's reason.
func TestCreateWithVolumesFile(t *testing.T) {
	allowed := t.TempDir()
	env := cmdtest.New(t, func(o *server.Options) { o.AllowHostPaths = []string{allowed} })
	if !env.Server.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine (volumes need isolation)")
	}
	os.WriteFile(filepath.Join(allowed, "input.txt"), []byte("from the host\n"), 0o644)
	vols := cmdtest.WriteFile(t, "volumes.json", `[
  {"name": "in", "host": {"path": "`+allowed+`"}, "mountPath": "/mnt/in", "readOnly": true},
  {"name": "out", "pvc": {"claimName": "results"}, "mountPath": "/workspace/out"}
]`)
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(env.Must("sandbox", "create", "-i", "python:3.11", "--volumes-file", vols, "-o", "json")), &created); err != nil {
		t.Fatal(err)
	}
	id := created.ID
	got := env.Must("command", "run", id, "--", "sh", "-c", "cat /mnt/in/input.txt; echo made > /workspace/out/result.txt; touch /mnt/in/x 2>/dev/null || echo read-only")
	if got != "from the host\nread-only\n" {
		t.Errorf("command output %q", got)
	}
	if got := env.Must("file", "cat", id, "/workspace/out/result.txt"); got != "made\n" {
		t.Errorf("file cat of the named volume: %q", got)
	}
	env.Must("sandbox", "kill", id)
	kept, err := os.ReadFile(filepath.Join(env.Server.DataDir(), "volumes", "results", "_data", "result.txt"))
	if err != nil || string(kept) != "made\n" {
		t.Errorf("named volume after the kill: %q, %v", kept, err)
	}

	denied := cmdtest.WriteFile(t, "denied.json", `[{"name": "etc", "host": {"path": "/etc"}, "mountPath": "/mnt/etc"}]`)
	r := env.Run("sandbox", "create", "-i", "python:3.11", "--volumes-file", denied)
	if r.Code != 1 || !strings.Contains(r.Stderr, "Host path '/etc' is not under any allowed prefix") {
		t.Errorf("refused host volume: exit %d, stderr %q", r.Code, r.Stderr)
	}
}
