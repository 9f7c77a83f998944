//go:build linux

package server_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server/sandbox"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// An unisolated sandbox has no boundary, but killing it must still end
// all it started: a daemon that dropped its environment (and so the
// sandbox's marker) and left the session included.
func TestUnisolatedKillEndsProcessWithoutMarker(t *testing.T) {
	if cs := sandbox.Cgroups(); !cs.Available {
		t.Skip("without cgroups the marker is all there is (docs/security.md):", cs.Reason)
	}
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := c.create(nil)
	out, code := c.sh(id, `env -i setsid /bin/sh -c 'echo $$ >daemon.pid; exec /bin/sleep 1000' </dev/null >/dev/null 2>&1 &
while [ ! -s daemon.pid ]; do sleep 0.01; done; cat daemon.pid`)
	if code != 0 {
		t.Fatalf("command exited %d: %q", code, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("daemon pid %q: %v", out, err)
	}
	// Wait for the exec so the check below sees the sleep, not the shell.
	isSleep := func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		return string(b) == "/bin/sleep\x001000\x00" && procState(pid) != "Z"
	}
	for deadline := time.Now().Add(10 * time.Second); !isSleep(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never became the daemon's sleep", pid)
		}
	}
	t.Cleanup(func() {
		if isSleep() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	c.expect(204, c.do("DELETE", "/sandboxes/"+id, nil))
	for deadline := time.Now().Add(10 * time.Second); isSleep(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d (env -i setsid sleep 1000) survived the sandbox's deletion", pid)
		}
	}
}

// An unisolated sandbox's limits hold where the server can make cgroups:
// its processes are all in the cgroup that names them, and it carries
// the limits of the request.
func TestUnisolatedSandboxLimitsHold(t *testing.T) {
	if cs := sandbox.Cgroups(); !cs.Available {
		t.Skip("without cgroups an unisolated sandbox has no limits (docs/security.md):", cs.Reason)
	}
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	id := c.create(map[string]any{"resourceLimits": map[string]string{"cpu": "500m", "memory": "64Mi", "pids": "32"}})
	hog := `python3 -c "
chunks = []
for i in range(16): chunks.append(bytearray(16 << 20))
print('held', len(chunks) * 16, 'MiB')
"`
	if out, code := c.sh(id, hog); code == 0 {
		t.Errorf("a 256 MiB hog in a 64 MiB sandbox finished: %q", out)
	}
	bomb := `python3 -c "
import os, time
children = []
for i in range(100):
    try:
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    except OSError:
        pass
print(len(children))
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"`
	out, _ := c.sh(id, bomb)
	if n, err := strconv.Atoi(out); err != nil || n == 0 || n >= 32 {
		t.Errorf("processes forked in a sandbox capped at 32: %q", out)
	}
	if out, code := c.sh(id, "echo alive"); out != "alive" || code != 0 {
		t.Errorf("after the hog and the bomb: %q %d", out, code)
	}
}
