package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommandRun runs `osb command run` as a process: streams kept apart,
// the remote exit code, and Ctrl-C (a real SIGINT) stopping the remote
// command, once and twice.
func TestCommandRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env := startServer(t)
	var created struct{ ID string }
	out := osb(t, bin, env, "sandbox", "create", "-i", "python:3.11", "-o", "json").expect(t, 0, "sandbox create")
	if err := json.Unmarshal([]byte(out.stdout), &created); err != nil || created.ID == "" {
		t.Fatalf("create: %v %s", err, out.stdout)
	}
	sb := created.ID

	r := osb(t, bin, env, "command", "run", sb, "--", "sh", "-c", "echo out; echo err >&2; exit 3")
	if r.code != 3 || r.stdout != "out\n" || r.stderr != "err\n" {
		t.Errorf("run: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Output comes as lines: \r\n ends one, and the last gets its newline.
	if r = osb(t, bin, env, "command", "run", sb, "-o", "raw", "--", "printf", "a\\r\\nb"); r.code != 0 || r.stdout != "a\nb\n" {
		t.Errorf("raw: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	t.Run("ctrl-c", func(t *testing.T) {
		// The command has a child in a session of its own (setsid), which
		// a signal to the command's process group would not reach. It
		// prints its pid once that child runs.
		token := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1000000)
		p := startOsb(t, bin, env, "command", "run", sb, "--", "sh", "-c", "setsid sleep 1"+token+
			` & while [ "$(tr '\0' ' ' </proc/$!/cmdline)" != "sleep 1`+token+` " ]; do :; done; echo $$; exec sleep `+token)
		pid := strings.TrimSpace(p.stdoutLine(t))
		p.cmd.Process.Signal(os.Interrupt)
		p.stderrUntil(t, "Interrupted: command ")
		if code := p.wait(t); code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
		gone := osb(t, bin, env, "command", "run", sb, "--", "sh", "-c", "kill -0 "+pid+" 2>/dev/null || echo gone")
		if gone.stdout != "gone\n" {
			t.Errorf("remote process %s after Ctrl-C: %q %q", pid, gone.stdout, gone.stderr)
		}
		// Only a command line that starts with the child's: not the shell's
		// that looks for it.
		left := osb(t, bin, env, "command", "run", sb, "--", "sh", "-c",
			`for f in /proc/[0-9]*/cmdline; do case "$(tr '\0' ' ' <$f)" in "sleep 1`+token+` "*) echo left;; esac; done`)
		if left.stdout != "" {
			t.Errorf("the command's setsid child (sleep 1%s) after Ctrl-C: %q %q", token, left.stdout, left.stderr)
		}
	})

	// A closed terminal (SIGHUP) or a SIGTERM stops the remote command as
	// Ctrl-C does, and osb exits as a shell reports the signal.
	for _, sig := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGHUP, 129}, {syscall.SIGTERM, 143}} {
		t.Run(sig.sig.String(), func(t *testing.T) {
			token := fmt.Sprintf("2000.%d", time.Now().UnixNano()%1000000)
			p := startOsb(t, bin, env, "command", "run", sb, "--", "sh", "-c", "echo $$; exec sleep "+token)
			pid := strings.TrimSpace(p.stdoutLine(t))
			p.cmd.Process.Signal(sig.sig)
			p.stderrUntil(t, "Interrupted: command ")
			if code := p.wait(t); code != sig.code {
				t.Errorf("exit %d, want %d", code, sig.code)
			}
			gone := osb(t, bin, env, "command", "run", sb, "--", "sh", "-c", "kill -0 "+pid+" 2>/dev/null || echo gone")
			if gone.stdout != "gone\n" {
				t.Errorf("remote process %s after %v: %q %q", pid, sig.sig, gone.stdout, gone.stderr)
			}
		})
	}

	t.Run("SIGHUP under nohup", func(t *testing.T) {
		// Started under nohup, osb keeps ignoring SIGHUP. Had it taken the
		// SIGHUP sent first, it would exit 129; it exits 143, for the
		// SIGTERM after it.
		if _, err := exec.LookPath("nohup"); err != nil {
			t.Skip("no nohup on PATH")
		}
		token := fmt.Sprintf("3000.%d", time.Now().UnixNano()%1000000)
		p := startOsb(t, "nohup", env, bin, "command", "run", sb, "--", "sh", "-c", "echo $$; exec sleep "+token)
		p.stdoutLine(t)
		p.cmd.Process.Signal(syscall.SIGHUP)
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.stderrUntil(t, "Interrupted: command ")
		if code := p.wait(t); code != 143 {
			t.Errorf("exit %d, want 143 (SIGTERM; SIGHUP ignored)", code)
		}
	})

	t.Run("SIGHUP on a stream", func(t *testing.T) {
		// A followed log is a stream with no end of its own.
		bg := osb(t, bin, env, "command", "run", sb, "-d", "-o", "json", "--", "sh", "-c", "echo first; exec sleep 1000").expect(t, 0, "background run")
		var started struct {
			ExecutionID string `json:"execution_id"`
		}
		if err := json.Unmarshal([]byte(bg.stdout), &started); err != nil || started.ExecutionID == "" {
			t.Fatalf("background run: %v %s", err, bg.stdout)
		}
		p := startOsb(t, bin, env, "command", "logs", sb, started.ExecutionID, "--follow")
		if line := p.stdoutLine(t); line != "first\n" {
			t.Fatalf("first line %q", line)
		}
		p.cmd.Process.Signal(syscall.SIGHUP)
		p.stderrUntil(t, "Aborted.")
		if code := p.wait(t); code != 129 {
			t.Errorf("exit %d, want 129", code)
		}
		osb(t, bin, env, "command", "interrupt", sb, started.ExecutionID)
	})

	t.Run("closed stdout", func(t *testing.T) {
		// osb ... | head -1: once the reader is gone, osb stops the remote
		// command and exits 141, as a command killed by SIGPIPE would.
		token := fmt.Sprintf("4000.%d", time.Now().UnixNano()%1000000)
		p := startOsb(t, bin, env, "command", "run", sb, "--", "yes", token)
		if line := p.stdoutLine(t); line != token+"\n" {
			t.Fatalf("first line %q", line)
		}
		p.out.Close()
		if code := p.wait(t); code != 141 {
			t.Errorf("exit %d, want 141", code)
		}
		for deadline := time.Now().Add(30 * time.Second); yesRunning(token); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the remote command is still running")
			}
		}
	})

	t.Run("ctrl-c twice", func(t *testing.T) {
		// The command ignores SIGTERM, so stopping it takes the server a
		// few seconds; the second Ctrl-C does not wait for that.
		p := startOsb(t, bin, env, "command", "run", sb, "--", "sh", "-c", "trap '' TERM; echo ready; exec sleep 1000")
		p.stdoutLine(t)
		p.cmd.Process.Signal(os.Interrupt)
		p.stderrUntil(t, "Stopping the remote command")
		p.cmd.Process.Signal(os.Interrupt)
		p.stderrUntil(t, "Interrupted again: not waiting for command ")
		if code := p.wait(t); code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
	})
}

// yesRunning reports whether a live process runs `yes <token>`.
func yesRunning(token string) bool {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, []byte("yes\x00"+token+"\x00")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' {
			return true
		}
	}
	return false
}

// running is an osb process whose output the test reads as it comes.
type running struct {
	cmd    *exec.Cmd
	out    io.ReadCloser // stdout, to close it as a reader that went away
	stdout *bufio.Reader
	stderr chan string // stderr, line by line
}

func startOsb(t *testing.T, bin string, env []string, args ...string) *running {
	t.Helper()
	cmd := command(t, bin, args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &running{cmd: cmd, out: stdout, stdout: bufio.NewReader(stdout), stderr: make(chan string, 64)}
	go func() {
		defer close(p.stderr)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.stderr <- sc.Text()
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return p
}

func (p *running) stdoutLine(t *testing.T) string {
	t.Helper()
	line, err := p.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("reading stdout: %q, %v", line, err)
	}
	return line
}

// stderrUntil reads stderr until a line starts with prefix.
func (p *running) stderrUntil(t *testing.T, prefix string) {
	t.Helper()
	var seen []string
	for line := range p.stderr {
		if strings.HasPrefix(line, prefix) {
			return
		}
		seen = append(seen, line)
	}
	t.Fatalf("stderr ended without a line starting %q: %q", prefix, seen)
}

func (p *running) wait(t *testing.T) int {
	t.Helper()
	io.Copy(io.Discard, p.stdout)
	err := p.cmd.Wait()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("osb died of %v: %v", ws.Signal(), err)
	}
	return p.cmd.ProcessState.ExitCode()
}
