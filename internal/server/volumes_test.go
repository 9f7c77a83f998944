//go:build linux

package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server"
)

func volumeBody(vols ...map[string]any) map[string]any {
	list := make([]any, len(vols))
	for i, v := range vols {
		list[i] = v
	}
	return createBody(map[string]any{"volumes": list})
}

// A host directory is mounted only under an allowed prefix; elsewhere the
// create is refused with the real server's code, and nothing is made.
func TestHostVolumeAllowedOnlyUnderPrefix(t *testing.T) {
	t.Parallel()
	allowed := t.TempDir()
	c := newClient(t, func(o *server.Options) { o.AllowHostPaths = []string{allowed} })
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	os.WriteFile(filepath.Join(allowed, "in.txt"), []byte("from the host\n"), 0o644)
	id := c.create(volumeBody(map[string]any{"name": "data", "host": map[string]any{"path": allowed}, "mountPath": "/mnt/data"}))
	if out, code := c.sh(id, "cat /mnt/data/in.txt; stat -c %u /mnt/data/in.txt; echo from-sandbox > /mnt/data/out.txt && echo wrote"); code != 0 || out != "from the host\n0\nwrote" {
		t.Errorf("host volume: %d %q (the host's owners should show as the sandbox's)", code, out)
	}
	if fi, err := os.Stat(filepath.Join(allowed, "out.txt")); err != nil {
		t.Errorf("the sandbox's file is not on the host: %v", err)
	} else if st := fi.Sys().(*syscall.Stat_t); os.Geteuid() == 0 && st.Uid != 0 {
		t.Errorf("written by root in the sandbox, owned by uid %d on the host", st.Uid)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere")
	r := c.expect(400, c.do("POST", "/sandboxes", volumeBody(map[string]any{"name": "data", "host": map[string]any{"path": outside}, "mountPath": "/mnt/data"})))
	if r.code() != "VOLUME::HOST_PATH_NOT_ALLOWED" || !strings.Contains(string(r.body), "is not under any allowed prefix") {
		t.Errorf("outside the prefix: %s", r.body)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a refused host volume was created")
	}
}

// A named volume outlives its sandbox and is shared by two; readOnly is
// enforced inside; subPath mounts a part of it.
func TestNamedVolumeSharedKeptAndReadOnly(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	rw := map[string]any{"name": "cache", "pvc": map[string]any{"claimName": "shared-cache"}, "mountPath": "/cache"}
	a := c.create(volumeBody(rw))
	if out, code := c.sh(a, "mkdir -p /cache/sub && echo kept > /cache/sub/file && echo ok"); code != 0 || out != "ok" {
		t.Fatalf("writing the volume: %d %q", code, out)
	}
	ro := map[string]any{"name": "cache", "pvc": map[string]any{"claimName": "shared-cache", "createIfNotExists": false},
		"mountPath": "/ro", "readOnly": true, "subPath": "sub"}
	b := c.create(volumeBody(ro))
	if out, _ := c.sh(b, "cat /ro/file; touch /ro/x 2>/dev/null || echo read-only; mount -o remount,rw /ro 2>/dev/null || echo locked"); out != "kept\nread-only\nlocked" {
		t.Errorf("read-only subPath mount: %q", out)
	}
	// Mounts stay through a pause.
	c.expect(202, c.do("POST", "/sandboxes/"+b+"/pause", nil))
	c.expect(202, c.do("POST", "/sandboxes/"+b+"/resume", nil))
	if !eventually(t, 10*time.Second, func() bool { return c.state(b) == "Running" }) {
		t.Fatalf("resumed sandbox is %s", c.state(b))
	}
	if out, _ := c.sh(b, "cat /ro/file"); out != "kept" {
		t.Errorf("after pause and resume the volume holds %q", out)
	}
	c.expect(204, c.do("DELETE", "/sandboxes/"+a, nil))
	c.expect(204, c.do("DELETE", "/sandboxes/"+b, nil))
	d := c.create(volumeBody(rw))
	if out, _ := c.sh(d, "cat /cache/sub/file"); out != "kept" {
		t.Errorf("after both sandboxes were killed the volume holds %q", out)
	}
	r := c.expect(400, c.do("POST", "/sandboxes", volumeBody(map[string]any{"name": "x", "pvc": map[string]any{"claimName": "never-made", "createIfNotExists": false}, "mountPath": "/x"})))
	if r.code() != "VOLUME::PVC_NOT_FOUND" {
		t.Errorf("missing named volume: %s", r.body)
	}
	r = c.expect(400, c.do("POST", "/sandboxes", volumeBody(map[string]any{"name": "x", "pvc": map[string]any{"claimName": "v"}, "mountPath": "/x", "subPath": "../up"})))
	if r.code() != "VOLUME::INVALID_SUB_PATH" {
		t.Errorf("subPath with ..: %s", r.body)
	}
}

// A named volume made with deleteOnSandboxTermination goes with its
// sandbox, unless another sandbox still mounts it.
func TestNamedVolumeDeletedWithItsSandbox(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	vol := func(claim string, del bool) map[string]any {
		return volumeBody(map[string]any{"name": "v", "pvc": map[string]any{"claimName": claim, "deleteOnSandboxTermination": del}, "mountPath": "/v"})
	}
	dirOf := func(claim string) string { return filepath.Join(c.srv.DataDir(), "volumes", claim) }
	a := c.create(vol("scratch", true))
	c.expect(204, c.do("DELETE", "/sandboxes/"+a, nil))
	if _, err := os.Stat(dirOf("scratch")); !os.IsNotExist(err) {
		t.Errorf("the volume made for a deleted sandbox is still there: %v", err)
	}
	b := c.create(vol("shared", true))
	other := c.create(vol("shared", false))
	c.expect(204, c.do("DELETE", "/sandboxes/"+b, nil))
	if _, err := os.Stat(dirOf("shared")); err != nil {
		t.Errorf("a volume another sandbox mounts was removed: %v", err)
	}
	if out, code := c.sh(other, "echo still > /v/f && cat /v/f"); code != 0 || out != "still" {
		t.Errorf("the other sandbox's volume: %d %q", code, out)
	}
}
