//go:build linux

package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/image/imagetest"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// An isolated server makes a sandbox ahead of any request (a spare), and a
// create takes it, with all the request says: its id is the spare's, its
// environment and limits the request's. The next spare follows; deleting
// the sandbox leaves only that one.
func TestCreateTakesTheSpare(t *testing.T) {
	t.Parallel()
	c := newClient(t, func(o *server.Options) { o.NoSpare = false })
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	if cg := sandbox.Cgroups(); !cg.Available {
		t.Skip("no cgroups here, and so no spares: " + cg.Reason)
	}
	dir := filepath.Join(c.srv.DataDir(), "sandboxes")
	spare := awaitSandboxDirs(t, dir, 1)[0]
	id := c.create(map[string]any{"env": map[string]string{"FROM": "the request"},
		"resourceLimits": map[string]string{"cpu": "500m", "memory": "300Mi", "pids": "77"}})
	if id != spare {
		t.Fatalf("the create made %s, not the spare %s", id, spare)
	}
	if out, code := c.sh(id, "echo $FROM"); code != 0 || out != "the request" {
		t.Errorf("the sandbox says %q (exit %d)", out, code)
	}
	m := c.expect(200, c.do("GET", c.srv.URL()+"/sandboxes/"+id+"/proxy/44772/metrics", nil)).json(t)
	if m["mem_total_mib"] != float64(300) {
		t.Errorf("metrics: %v, want a memory total of the request's 300 MiB", m)
	}
	if n := pidsMax(t, id); n != 77+int(sandbox.OpenFiles().Reserve()) {
		t.Errorf("pids cap %d, want the request's 77 and the init's and execd's reserve", n)
	}
	next := awaitSandboxDirs(t, dir, 2)
	c.expect(204, c.do("DELETE", "/sandboxes/"+id, nil))
	left := awaitSandboxDirs(t, dir, 1)
	if left[0] == id || !slices.Contains(next, left[0]) {
		t.Errorf("after the delete %s holds %v, want the next spare of %v", dir, left, next)
	}
	// The next spare was made with the last create's limits; a create
	// with others (more memory: the memory+swap cap moves first) gets its own.
	other := c.create(map[string]any{"resourceLimits": map[string]string{"cpu": "1", "memory": "1Gi", "pids": "90"}})
	if other != left[0] {
		t.Fatalf("the create made %s, not the spare %s", other, left[0])
	}
	m = c.expect(200, c.do("GET", c.srv.URL()+"/sandboxes/"+other+"/proxy/44772/metrics", nil)).json(t)
	if m["mem_total_mib"] != float64(1024) {
		t.Errorf("metrics: %v, want a memory total of the request's 1024 MiB", m)
	}
	if n := pidsMax(t, other); n != 90+int(sandbox.OpenFiles().Reserve()) {
		t.Errorf("pids cap %d, want the request's 90 and the init's and execd's reserve", n)
	}
	// One with the same limits takes a spare that has them already.
	spares := awaitSandboxDirs(t, dir, 2)
	same := c.create(map[string]any{"resourceLimits": map[string]string{"cpu": "1", "memory": "1Gi", "pids": "90"}})
	if !slices.Contains(spares, same) || same == other {
		t.Fatalf("the create made %s, not the spare in %v", same, spares)
	}
	m = c.expect(200, c.do("GET", c.srv.URL()+"/sandboxes/"+same+"/proxy/44772/metrics", nil)).json(t)
	if m["mem_total_mib"] != float64(1024) || pidsMax(t, same) != 90+int(sandbox.OpenFiles().Reserve()) {
		t.Errorf("metrics: %v, pids cap %d: want the request's 1024 MiB and 90", m, pidsMax(t, same))
	}
}

// awaitSandboxDirs waits until dir holds n sandbox directories, and
// returns their names.
func awaitSandboxDirs(t *testing.T, dir string, n int) []string {
	t.Helper()
	var names []string
	if !eventually(t, time.Minute, func() bool { names = sandboxDirs(dir); return len(names) == n }) {
		t.Fatalf("%s holds %v, want %d sandboxes", dir, names, n)
	}
	return names
}

// sandboxDirs lists the sandbox directories in dir.
func sandboxDirs(dir string) []string {
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// The spare has the root of the last create, built: a create for the same
// image takes it and runs on that image; one for another image discards
// it and runs on its own, and the next spare has that one. A create that
// restores a snapshot onto the image makes its own sandbox (its changes
// must be in the root before it is mounted) and leaves the spare.
func TestSpareFollowsTheImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		img := imagetest.Busybox(t, nil, imagetest.Layer(t, imagetest.Entry{Name: "etc/motd", Body: "image " + name + "\n"}))
		imagetest.WriteLayout(t, filepath.Join(dir, name), "1", img)
	}
	c := imageClient(t, dir, func(o *server.Options) { o.NoSpare = false })
	if cg := sandbox.Cgroups(); !cg.Available {
		t.Skip("no cgroups here, and so no spares: " + cg.Reason)
	}
	sandboxes := filepath.Join(c.srv.DataDir(), "sandboxes")
	hostSpare := awaitSandboxDirs(t, sandboxes, 1)[0]
	first := imageCreate(c, "a:1", nil)
	if first == hostSpare {
		t.Fatal("a create for an image took the spare of the host's programs")
	}
	spare := newSpare(t, sandboxes, []string{hostSpare}, first)
	second := imageCreate(c, "a:1", nil)
	if second != spare {
		t.Errorf("the second create of a:1 made %s, not the spare %s", second, spare)
	}
	if out, code := c.sh(second, "echo changed > /etc/motd; cat /etc/motd"); code != 0 || out != "changed" {
		t.Fatalf("in the spare: %d %q", code, out)
	}
	spare = newSpare(t, sandboxes, nil, first, second)
	restored := restoreSnapshotOf(t, c, second)
	if restored == spare {
		t.Errorf("a restore took the spare %s", restored)
	}
	if out, code := c.sh(restored, "cat /etc/motd"); code != 0 || out != "changed" {
		t.Errorf("the restored sandbox: %d %q", code, out)
	}
	other := imageCreate(c, "b:1", nil)
	if other == spare {
		t.Errorf("a create for b:1 took the spare of a:1 %s", other)
	}
	if out, code := c.sh(other, "cat /etc/motd"); code != 0 || out != "image b" {
		t.Errorf("the b:1 sandbox: %d %q", code, out)
	}
	spare = newSpare(t, sandboxes, []string{spare}, first, second, restored, other)
	if last := imageCreate(c, "b:1", nil); last != spare {
		t.Errorf("the second create of b:1 made %s, not the spare %s", last, spare)
	}
}

// newSpare waits until dir holds the sandboxes live and one more, the
// spare, that is none of stale, and returns it.
func newSpare(t *testing.T, dir string, stale []string, live ...string) string {
	t.Helper()
	var extra []string
	if !eventually(t, time.Minute, func() bool {
		extra = extra[:0]
		for _, name := range sandboxDirs(dir) {
			if !slices.Contains(live, name) {
				extra = append(extra, name)
			}
		}
		return len(extra) == 1 && !slices.Contains(stale, extra[0])
	}) {
		t.Fatalf("%s holds %v beside %v, want one spare, none of %v", dir, extra, live, stale)
	}
	return extra[0]
}
