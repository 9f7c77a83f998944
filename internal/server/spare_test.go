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
	if left := awaitSandboxDirs(t, dir, 1); left[0] == id || !slices.Contains(next, left[0]) {
		t.Errorf("after the delete %s holds %v, want the next spare of %v", dir, left, next)
	}
}

// awaitSandboxDirs waits until dir holds n sandbox directories, and
// returns their names.
func awaitSandboxDirs(t *testing.T, dir string, n int) []string {
	t.Helper()
	var names []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		entries, _ := os.ReadDir(dir)
		names = names[:0]
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				names = append(names, e.Name())
			}
		}
		if len(names) == n {
			return names
		}
	}
	t.Fatalf("%s holds %v, want %d sandboxes", dir, names, n)
	return nil
}
