// Package e2e runs the built osb binary like a user: `osb server` in the
// background, then osb commands as separate processes against it.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// TestMain removes the osb binary the tests shared. The tests signal the
// processes they start: those begin with the default actions.
func TestMain(m *testing.M) {
	cmdtest.DefaultChildSignals()
	code := m.Run()
	cmdtest.RemoveOsb()
	os.Exit(code)
}

// buildOsb compiles cmd/osb once for the package and returns the binary's
// path.
func buildOsb(t *testing.T) string { return cmdtest.BuildOsb(t) }

// serverProcess is `osb server` running in the background.
type serverProcess struct {
	cmd  *exec.Cmd
	addr string             // the host:port it listens on
	key  string             // the API key it printed, when it generated one
	logs cmdtest.SyncBuffer // its stderr so far
	done chan struct{}      // closed when its stderr ends
}

// launchServer starts `osb server` on a free loopback port, args added to
// its flags, and returns once it says it is listening. With key "" the
// server makes up its own. A server still running at cleanup is killed.
func launchServer(t *testing.T, bin, home, key string, args ...string) *serverProcess {
	t.Helper()
	return launchServerAs(t, nil, bin, home, key, args...)
}

// launchServerAs is launchServer with the server's process attributes
// (e.g. another user's credentials); nil for the test's own.
func launchServerAs(t *testing.T, attr *syscall.SysProcAttr, bin, home, key string, args ...string) *serverProcess {
	t.Helper()
	// --host-programs: tests reach no registry, whatever the machine's network.
	flags := []string{"server", "--listen", "127.0.0.1:0", "--host-programs"}
	cmd := exec.Command(bin, append(flags, args...)...)
	cmd.SysProcAttr = attr
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if key != "" {
		cmd.Env = append(cmd.Env, "OPEN_SANDBOX_API_KEY="+key)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serverProcess{cmd: cmd, done: make(chan struct{})}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-s.done
			cmd.Wait()
		}
	})
	ready := make(chan [2]string, 1) // address and generated key
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		var generated string
		for sc.Scan() {
			fmt.Fprintln(&s.logs, sc.Text())
			if rest, ok := strings.CutPrefix(sc.Text(), "Generated API key: "); ok {
				generated = rest
			}
			if rest, ok := strings.CutPrefix(sc.Text(), "osb server listening on http://"); ok {
				ready <- [2]string{rest, generated}
			}
		}
	}()
	select {
	case r := <-ready:
		s.addr, s.key = r[0], r[1]
		return s
	case <-s.done:
		t.Fatalf("osb server exited before listening:\n%s", s.logs.String())
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-s.done
		t.Fatalf("osb server did not say it was listening within a minute:\n%s", s.logs.String())
	}
	return nil
}

// stop sends sig and waits for the server to exit, a minute at most (then
// it is killed), and returns how it exited.
func (s *serverProcess) stop(sig os.Signal) error {
	s.cmd.Process.Signal(sig)
	exited := make(chan error, 1)
	go func() { <-s.done; exited <- s.cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		<-exited
		return fmt.Errorf("it ignored %v for a minute", sig)
	}
}

// startServer builds osb and runs `osb server` for the test; at cleanup the
// server must exit cleanly on SIGINT. It returns the binary and an
// environment that points osb at the server.
func startServer(t *testing.T) (bin string, env []string) {
	t.Helper()
	bin = buildOsb(t)
	home := t.TempDir()
	const key = "e2e-key"
	s := launchServer(t, bin, home, key)
	t.Cleanup(func() {
		if err := s.stop(syscall.SIGINT); err != nil {
			t.Errorf("osb server did not exit cleanly on SIGINT: %v\n%s", err, s.logs.String())
		}
	})
	return bin, clientEnv(home, s.addr, key)
}

// clientEnv is the whole environment of an osb process using the server
// at addr.
func clientEnv(home, addr, key string) []string {
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_DOMAIN=" + addr, "OPEN_SANDBOX_API_KEY=" + key}
}

type result struct {
	stdout, stderr string
	code           int
}

// processDeadline bounds a client process of a test (an osb command, a
// pipeline through it): one still running then is killed, and the test
// fails instead of waiting for ever. A guard, not a measure of speed.
const processDeadline = 2 * time.Minute

// command is exec.Command for a client process of the test: it is killed
// if it still runs processDeadline after it was made, and the test fails.
func command(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), processDeadline)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error {
		if ctx.Err() == context.DeadlineExceeded {
			t.Errorf("%s %q still ran after %s: killed", name, args, processDeadline)
		}
		return cmd.Process.Kill()
	}
	t.Cleanup(cancel)
	return cmd
}

// waitStopped waits for a process the test asked to stop, a minute at
// most (then it is killed and the test fails), and returns how it exited.
func waitStopped(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Errorf("%s %q did not exit within a minute of being asked to", cmd.Path, cmd.Args[1:])
		return errors.New("killed")
	}
}

// osb runs the binary with env and returns what it printed and its exit code.
func osb(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	cmd := command(t, bin, args...)
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
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env := startServer(t)
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
