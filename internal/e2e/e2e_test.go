// Package e2e runs the built osb binary like a user: `osb server` in the
// background, then osb commands as separate processes against it.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildOsb compiles cmd/osb into a temp dir and returns the binary's path.
func buildOsb(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build osb")
	}
	bin := filepath.Join(t.TempDir(), "osb")
	out, err := exec.Command(gobin, "build", "-o", bin, "github.com/osb-dev/osb/cmd/osb").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServer runs `osb server` on a free loopback port and returns its
// address once it says it is listening. It is stopped with SIGINT at cleanup.
func startServer(t *testing.T, bin, home, key string) string {
	t.Helper()
	cmd := exec.Command(bin, "server", "--listen", "127.0.0.1:0", "--api-key", key)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	var logs bytes.Buffer
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
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		exited := make(chan error, 1)
		go func() { <-done; exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("osb server did not exit cleanly on SIGINT: %v\n%s", err, logs.String())
			}
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-exited
			t.Errorf("osb server ignored SIGINT for a minute\n%s", logs.String())
		}
	})
	select {
	case a := <-addr:
		return a
	case <-done:
		t.Fatalf("osb server exited before listening:\n%s", logs.String())
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("osb server did not say it was listening within a minute:\n%s", logs.String())
	}
	return ""
}

type result struct {
	stdout, stderr string
	code           int
}

// osb runs the binary with env and returns what it printed and its exit code.
func osb(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	code := 0
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("osb %s: %v", strings.Join(args, " "), err)
	}
	return result{stdout.String(), stderr.String(), code}
}

func (r result) expect(t *testing.T, code int, args ...string) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("osb %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

func TestSandboxLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home := t.TempDir()
	const key = "e2e-key"
	addr := startServer(t, bin, home, key)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_DOMAIN=" + addr, "OPEN_SANDBOX_API_KEY=" + key}
	run := func(code int, args ...string) result {
		t.Helper()
		return osb(t, bin, env, args...).expect(t, code, args...)
	}

	var created struct{ ID, Status, Timeout, Image string }
	out := run(0, "sandbox", "create", "-i", "python:3.11", "-t", "10m", "-m", "suite=e2e", "-o", "json")
	if err := json.Unmarshal([]byte(out.stdout), &created); err != nil || created.ID == "" {
		t.Fatalf("create -o json: %v\n%s", err, out.stdout)
	}
	if created.Status != "created" || created.Timeout != "0:10:00" || created.Image != "python:3.11" || out.stderr != "" {
		t.Errorf("create printed %+v, stderr %q", created, out.stderr)
	}
	id := created.ID

	var got struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
		Metadata map[string]string `json:"metadata"`
	}
	json.Unmarshal([]byte(run(0, "sandbox", "get", id[:8], "-o", "json").stdout), &got)
	if got.ID != id || got.Status.State != "Running" || got.Metadata["suite"] != "e2e" {
		t.Errorf("get by prefix: %+v", got)
	}

	table := run(0, "sandbox", "list", "-m", "suite=e2e").stdout
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], id+" ") || !strings.Contains(lines[1], " Running ") {
		t.Errorf("list table:\n%s", table)
	}
	if r := run(2, "sandbox", "list", "-s", "bogus"); !strings.Contains(r.stderr, "Invalid sandbox state 'bogus'") {
		t.Errorf("list -s bogus: %q", r.stderr)
	}
	if r := run(3, "--api-key", "wrong", "sandbox", "list"); !strings.Contains(r.stderr, "INVALID_API_KEY") || r.stdout != "" {
		t.Errorf("wrong key: stdout %q stderr %q", r.stdout, r.stderr)
	}

	killed := run(0, "sandbox", "kill", id).stdout
	if killed != "SANDBOX_ID                        STATUS\n"+id+"  terminated\n" {
		t.Errorf("kill printed %q", killed)
	}
	if r := run(4, "sandbox", "get", id); !strings.Contains(r.stderr, "not found") {
		t.Errorf("get after kill: %q", r.stderr)
	}
	if empty := run(0, "sandbox", "list", "-o", "json").stdout; !strings.Contains(empty, `"items": []`) {
		t.Errorf("list after kill: %s", empty)
	}
}
