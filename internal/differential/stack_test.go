package differential

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// enableEnv turns the suite on; `make differential` sets it. Without it the
// suite skips: it starts Docker and the real server, minutes of set-up that
// `make test` should not pay.
const enableEnv = "OSB_DIFFERENTIAL"

// target is one server the scenarios run against: the environment that
// points osb at it.
type target struct {
	name string // "real" or "osb"
	vars []string
}

func TestMain(m *testing.M) {
	code := m.Run()
	cmdtest.RemoveOsb()
	os.Exit(code)
}

// repoRoot is the checkout this package is in (tests run in its directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// realStack starts the real OpenSandbox with realstack.sh up (idempotent;
// it stays up afterwards) and returns the target that points at it, or skips
// the test, saying why, where it cannot run.
func realStack(t *testing.T) target {
	t.Helper()
	if os.Getenv(enableEnv) == "" {
		t.Skip("the differential suite runs under `make differential` (" + enableEnv + "=1): it starts the real OpenSandbox with Docker")
	}
	if os.Geteuid() != 0 {
		t.Skip("the real OpenSandbox stack needs root (Docker); not root here")
	}
	script := os.Getenv("OSB_REALSTACK")
	if script == "" {
		script = filepath.Join(repoRoot(t), "..", "shared", "peers", "opensandbox", "realstack.sh")
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("no real OpenSandbox stack here: %v (../shared/peers/opensandbox/ holds it)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script, "up")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	started := time.Now()
	err := cmd.Run()
	if err != nil && strings.Contains(stderr.String(), "dockerd did not start") {
		t.Skipf("Docker cannot start here, so neither can the real OpenSandbox: %s", lastLine(stderr.String()))
	}
	if err != nil {
		t.Fatalf("realstack.sh up: %v\n%s", err, stderr.String())
	}
	t.Logf("real OpenSandbox up in %s", time.Since(started).Round(time.Second))
	// The script prints one line: export NAME=VALUE NAME=VALUE ...
	line := strings.TrimSpace(lastLine(stdout.String()))
	vars := strings.Fields(strings.TrimPrefix(line, "export "))
	if len(vars) == 0 || !strings.HasPrefix(line, "export ") {
		t.Fatalf("realstack.sh up printed %q, not the variables to export", stdout.String())
	}
	return target{name: "real", vars: vars}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// osbServer runs `osb server` (the built binary, isolated sandboxes) on a
// free loopback port until the test ends, and returns its target. The
// real stack's images are Debian tagged with other names, which no
// registry here serves: osb's sandboxes run the host's (Debian) programs.
func osbServer(t *testing.T, bin string) target {
	t.Helper()
	const key = "differential-key"
	home := t.TempDir()
	cmd := exec.Command(bin, "server", "--listen", "127.0.0.1:0", "--host-programs")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_API_KEY=" + key}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs cmdtest.SyncBuffer
	ready, done := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(&logs, sc.Text())
			if addr, ok := strings.CutPrefix(sc.Text(), "osb server listening on http://"); ok {
				ready <- addr
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
		}
		cmd.Wait()
		if t.Failed() {
			t.Logf("osb server's log:\n%s", logs.String())
		}
	})
	select {
	case addr := <-ready:
		return target{name: "osb", vars: []string{"OPEN_SANDBOX_DOMAIN=" + addr, "OPEN_SANDBOX_API_KEY=" + key, "OPEN_SANDBOX_PROTOCOL=http"}}
	case <-done:
		t.Fatalf("osb server exited before listening:\n%s", logs.String())
	case <-time.After(time.Minute):
		t.Fatalf("osb server did not say it was listening within a minute:\n%s", logs.String())
	}
	return target{}
}

// mcpPython is the virtualenv's python that scripts/interop-setup installed
// the official MCP client into, or "" with the reason there is none.
func mcpPython(root string) (string, string) {
	dir := os.Getenv("OSB_INTEROP_DIR")
	if dir == "" {
		dir = filepath.Join(root, ".interop")
	}
	py := filepath.Join(dir, "venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return "", "the official MCP client is not installed in " + dir + " (scripts/interop-setup installs it)"
	}
	return py, ""
}
