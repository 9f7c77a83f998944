package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerStopLeavesNothingBehind stops `osb server` with SIGTERM while its
// sandboxes run processes, and checks that it exits 0 with every process and
// every sandbox file gone.
func TestServerStopLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home, data := t.TempDir(), t.TempDir()
	const key = "stop-key"
	srv := launchServer(t, bin, home, key, "--data-dir", data)
	env := clientEnv(home, srv.addr, key)

	// A marker no other process on the machine carries, not even this test
	// run by another suite at the same time: sleep takes fractions.
	marker := fmt.Sprintf("4242.%d", os.Getpid())
	for i := 0; i < 2; i++ {
		id := createSandbox(t, bin, env)
		osb(t, bin, env, "command", "run", id, "-d", "-o", "json", "--", "sleep", marker).expect(t, 0)
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

// Without --api-key-file or OPEN_SANDBOX_API_KEY the server makes up a key,
// prints it once, and requires it.
func TestServerGeneratesAKey(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home := t.TempDir()
	srv := launchServer(t, bin, home, "")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(srv.key) {
		t.Fatalf("generated key %q", srv.key)
	}
	osb(t, bin, clientEnv(home, srv.addr, srv.key), "sandbox", "list").expect(t, 0)
	r := osb(t, bin, clientEnv(home, srv.addr, ""), "sandbox", "list").expect(t, 3)
	if !strings.Contains(r.stderr, "MISSING_API_KEY") {
		t.Errorf("no key: %q", r.stderr)
	}
	if err := srv.stop(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(srv.logs.String(), srv.key); n != 1 {
		t.Errorf("the key appears %d times in the server's output, want once:\n%s", n, srv.logs.String())
	}
}

// A data dir belongs to one server at a time; after a server is killed
// outright, the next one on its data dir removes what it left.
func TestDataDirAfterAKilledServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home, data := t.TempDir(), t.TempDir()
	const key = "reuse-key"
	first := launchServer(t, bin, home, key, "--data-dir", data)
	id := createSandbox(t, bin, clientEnv(home, first.addr, key))

	busyCmd := command(t, bin, "server", "--listen", "127.0.0.1:0", "--data-dir", data)
	busyCmd.Env = append(os.Environ(), "OPEN_SANDBOX_API_KEY="+key)
	busy, err := busyCmd.CombinedOutput()
	if !strings.Contains(string(busy), "Error: data dir "+data+" is in use by another osb server") || err == nil {
		t.Errorf("second server on a busy data dir: %v %s", err, busy)
	}

	first.cmd.Process.Kill()
	<-first.done
	first.cmd.Wait()
	if _, err := os.Stat(filepath.Join(data, "sandboxes", id)); err != nil {
		t.Fatalf("a killed server should leave its sandbox behind: %v", err)
	}
	// Its sandbox, and the spare it had made for the next create.
	before, _ := os.ReadDir(filepath.Join(data, "sandboxes"))
	second := launchServer(t, bin, home, key, "--data-dir", data)
	for _, e := range before {
		if _, err := os.Lstat(filepath.Join(data, "sandboxes", e.Name())); err == nil {
			t.Errorf("%s left in sandboxes/ after a restart", e.Name())
		}
	}
	if r := osb(t, bin, clientEnv(home, second.addr, key), "sandbox", "list", "-o", "json").expect(t, 0); !strings.Contains(r.stdout, `"items": []`) {
		t.Errorf("list after restart: %s", r.stdout)
	}
	if err := second.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(second.logs.String(), fmt.Sprintf("removed %d sandbox directories left by an earlier server", len(before))) {
		t.Errorf("restart log:\n%s", second.logs.String())
	}
}

// `sandbox metrics --watch` runs until Ctrl-C, which ends it with exit 0
// and nothing on stderr.
func TestMetricsWatchEndsOnCtrlC(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env := startServer(t)
	p := startOsb(t, bin, env, "sandbox", "metrics", createSandbox(t, bin, env)[:8], "--watch")
	if line := p.stdoutLine(t); !regexp.MustCompile(`^\[\S+Z\] cpu=\d+\.\d\d% cores=\d+ mem=`).MatchString(line) {
		t.Errorf("first sample %q", line)
	}
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0", code)
	}
	var stderr []string
	for l := range p.stderr {
		stderr = append(stderr, l)
	}
	if len(stderr) != 0 {
		t.Errorf("stderr %q", stderr)
	}
}

// createSandbox creates a sandbox with osb and returns its id.
func createSandbox(t *testing.T, bin string, env []string) string {
	t.Helper()
	out := osb(t, bin, env, "sandbox", "create", "-i", "ubuntu", "-t", "10m", "-o", "json").expect(t, 0)
	var sb struct{ ID string }
	if err := json.Unmarshal([]byte(out.stdout), &sb); err != nil || sb.ID == "" {
		t.Fatalf("create: %v %s", err, out.stdout)
	}
	return sb.ID
}

// `osb server 2>&1 | tee log`, then Ctrl-C: tee ends with the server, and
// every line the server writes while it stops meets a closed pipe. It
// still removes its sandboxes and its data dir, and exits 0.
func TestServerCleansUpAfterItsStderrCloses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home := t.TempDir()
	const key = "pipe-key"
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := command(t, bin, "server", "--listen", "127.0.0.1:0", "--unsafe-no-isolation")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_API_KEY=" + key}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	listening := regexp.MustCompile(`listening on http://(\S+) \(data dir (\S+), `)
	sc := bufio.NewScanner(r)
	var addr, data string
	for addr == "" && sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			addr, data = m[1], m[2]
		}
	}
	if addr == "" {
		t.Fatalf("the server never said where it listens")
	}
	t.Cleanup(func() { os.RemoveAll(data) }) // when the test fails
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "osb server listening on ") {
	}
	id := createSandbox(t, bin, clientEnv(home, addr, key))
	if _, err := os.Stat(filepath.Join(data, "sandboxes", id)); err != nil {
		t.Fatalf("the sandbox's directory: %v", err)
	}
	r.Close() // tee is gone
	cmd.Process.Signal(syscall.SIGINT)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("osb server exited with %v after Ctrl-C with its stderr closed", err)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("osb server did not stop within a minute of Ctrl-C")
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data dir %s is still there (%v)", data, err)
	}
}
