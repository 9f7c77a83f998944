package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	srv := exec.Command(bin, "server", "--listen", "127.0.0.1:0", "--api-key", key, "--data-dir", data)
	srv.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	var logs bytes.Buffer
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if rest, ok := strings.CutPrefix(sc.Text(), "osb server listening on http://"); ok {
				addr <- rest
			}
		}
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(time.Minute):
		t.Fatalf("osb server did not start:\n%s", logs.String())
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_DOMAIN=" + a, "OPEN_SANDBOX_API_KEY=" + key}

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
	if n := countProcesses(marker); n != 2 {
		t.Fatalf("%d sandbox processes running before the stop, want 2", n)
	}

	srv.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { <-done; exited <- srv.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("osb server exited with %v on SIGTERM\n%s", err, logs.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("osb server ignored SIGTERM\n%s", logs.String())
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
