package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command killed (by its timeout, say) after it started but before its
// gate opened ends as killed, the way a user's timeout reads, not as a
// failure to confine it.
func TestGatedCommandKilledBeforeItsGateEndsAsKilled(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", oomFirst, "sh", "sleep", "30")
	killFirst := func(pid int) error {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return err
		}
		waitZombie(t, pid)
		return nil
	}
	if err := startGated(cmd, killFirst); err != nil {
		t.Fatalf("startGated: %v, want the start to stand and Wait to tell how it ended", err)
	}
	err := cmd.Wait()
	if err == nil || err.Error() != "signal: killed" {
		t.Fatalf("Wait: %v, want signal: killed", err)
	}
}

// waitZombie waits until pid has exited (a zombie nobody reaped yet).
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatalf("reading the state of %d: %v", pid, err)
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d still running after 30 s", pid)
}
