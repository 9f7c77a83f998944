package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestServerStopLeavesNothingBehind stops `osb server` with SIGTERM while its
// sandboxes run processes, and checks that it exits 0 with every process and
// every sandbox file gone.
func TestServerStopLeavesNothingBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home, data := t.TempDir(), t.TempDir()
	const key = "stop-key"
	srv := launchServer(t, bin, home, key, "--data-dir", data)
	env := clientEnv(home, srv.addr, key)

	// A marker no other process on the machine carries: sleep takes fractions.
	marker := "4242.17"
	for i := 0; i < 2; i++ {
		out := osb(t, bin, env, "sandbox", "create", "-i", "ubuntu", "-t", "10m", "-o", "json").expect(t, 0)
		var sb struct{ ID string }
		if err := json.Unmarshal([]byte(out.stdout), &sb); err != nil {
			t.Fatalf("create: %v %s", err, out.stdout)
		}
		osb(t, bin, env, "command", "run", sb.ID, "-d", "-o", "json", "--", "sleep", marker).expect(t, 0)
	}
	// run -d returns once the command is started; its process may not have
	// become `sleep` yet.
	for deadline := time.Now().Add(time.Minute); countProcesses(marker) != 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sandbox processes running before the stop, want 2", countProcesses(marker))
		}
	}

	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("osb server exited with %v on SIGTERM\n%s", err, srv.logs.String())
	}
	if n := countProcesses(marker); n != 0 {
		t.Errorf("%d sandbox processes survived the server", n)
	}
	left, _ := filepath.Glob(filepath.Join(data, "sandboxes", "*"))
	if len(left) != 0 {
		t.Errorf("sandbox files left behind: %v", left)
	}
}

// countProcesses counts processes running `sleep <marker>`.
func countProcesses(marker string) int {
	n := 0
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Equal(b, []byte("sleep\x00"+marker+"\x00")) {
			n++
		}
	}
	return n
}
