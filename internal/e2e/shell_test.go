//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// onTerminal is an osb process on a pseudo-terminal of its own; the test
// types on the master side and reads what the terminal shows.
type onTerminal struct {
	*cmdtest.Terminal
	t      *testing.T
	cmd    *exec.Cmd
	exited chan struct{}
	code   int
	before unix.Termios // the terminal's settings before osb started
}

func startOnTerminal(t *testing.T, bin string, env []string, args ...string) *onTerminal {
	t.Helper()
	tm := cmdtest.NewTerminal(t, 120, 40)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(env, "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tm.Slave, tm.Slave, tm.Slave
	// Its own session with this terminal as the controlling one, as in a
	// terminal window: resizes and Ctrl-C reach it the real way.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	// Read before osb starts: once started, it may make the terminal raw
	// before the test gets to look.
	before := tm.Termios()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &onTerminal{Terminal: tm, t: t, cmd: cmd, exited: make(chan struct{}), before: before}
	go func() {
		cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.code = 128 + int(ws.Signal())
		}
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	return p
}

func (p *onTerminal) wait() int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(cmdtest.ScreenWait):
		p.t.Fatalf("osb did not exit; the terminal shows:\n%q", p.Text())
		return -1
	}
}

// prompt is the prompt ready sets, after bash's bracketed-paste switch.
const prompt = `(\x1b\[\?2004h)?READY> `

// ready sets a prompt that the typed line cannot be mistaken for.
func (p *onTerminal) ready(from int) int {
	p.Send("PS1='RE''ADY> '\r")
	return p.WaitFor(from, prompt)
}

func newShellSandbox(t *testing.T) (bin string, env []string, sb string) {
	bin, env = startServer(t)
	var created struct{ ID string }
	out := osb(t, bin, env, "sandbox", "create", "-i", "python:3.11", "-o", "json").expect(t, 0, "sandbox create")
	if err := json.Unmarshal([]byte(out.stdout), &created); err != nil {
		t.Fatal(err)
	}
	return bin, env, created.ID
}

// TestShellOnATerminal types into `osb shell` like a person: the prompt, a
// command's output, the window size and its change, Ctrl-C stopping a
// remote sleep, a full-screen program's alternate screen, the exit code,
// and the terminal as it was before.
func TestShellOnATerminal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env, sb := newShellSandbox(t)
	p := startOnTerminal(t, bin, env, "shell", sb)
	before := p.before
	at := p.ready(0)
	if raw := p.Termios(); raw.Lflag&(unix.ECHO|unix.ICANON|unix.ISIG) != 0 {
		t.Errorf("the terminal is not raw during the session: lflag %#x", raw.Lflag)
	}
	p.Send("echo $((6*7)) $TERM; stty size\r")
	at = p.WaitFor(at, `42 xterm-256color\r\n40 120\r\n`+prompt)

	// A resize of the window (the kernel sends osb SIGWINCH) reaches the remote terminal.
	p.Resize(90, 25)
	for i := 0; ; i++ {
		p.Send("stty size\r")
		end := p.WaitFor(at, `\d+ \d+\r\n`+prompt)
		got := p.Text()[at:end]
		at = end
		if strings.Contains(got, "25 90\r\n") {
			break
		}
		if i == 100 {
			t.Fatalf("stty size never showed the new size: %q", got)
		}
	}

	// Ctrl-C goes to the remote foreground job, not to osb. It is typed
	// once the job says it runs: typed as bash starts it, it reaches bash
	// before the job has the terminal, and the sleep goes on.
	p.Send("sh -c 'echo sle''eping; exec sleep 1000'\r")
	at = p.WaitFor(at, `sleeping\r\n`)
	p.Send("\x03")
	at = p.WaitFor(at, `\^C\r\n`+prompt)
	p.Send("echo status-$?\r")
	at = p.WaitFor(at, `status-130\r\n`)

	// A full-screen program: its alternate screen comes through raw.
	p.Send("printf '\\033[?1049hFULL\\033[?1049l'; echo\r")
	p.WaitFor(at, "\x1b\\[\\?1049hFULL\x1b\\[\\?1049l")

	p.Send("exit 3\r")
	if code := p.wait(); code != 3 {
		t.Errorf("exit %d, want the shell's 3", code)
	}
	if after := p.Termios(); after != before {
		t.Errorf("terminal not restored:\nbefore %+v\nafter  %+v", before, after)
	}
	// The session osb made is gone with its shell.
	if r := osb(t, bin, env, "command", "shell", "ls", sb, "-o", "json"); r.code != 0 || r.stdout != "[]\n" {
		t.Errorf("sessions left: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestShellDetachAttachTakeover: SIGTERM leaves the shell running and the
// terminal restored; --session attaches again (the screen replayed); a
// --takeover from a second terminal evicts the first, which says so and
// restores its terminal too.
func TestShellDetachAttachTakeover(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env, sb := newShellSandbox(t)
	p := startOnTerminal(t, bin, env, "shell", sb)
	before := p.before
	at := p.ready(0)
	p.Send("X=kept; echo marker-$((2+3))\r")
	p.WaitFor(at, `marker-5\r\n`)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(); code != 143 {
		t.Errorf("exit %d after SIGTERM, want 143", code)
	}
	if after := p.Termios(); after != before {
		t.Errorf("terminal not restored after SIGTERM")
	}
	end := p.WaitFor(0, `--session [0-9a-f-]{36}`)
	m := regexp.MustCompile(`--session ([0-9a-f-]{36})`).FindStringSubmatch(p.Text()[:end])
	sid := m[1]
	var list []map[string]any
	r := osb(t, bin, env, "command", "shell", "ls", sb, "-o", "json")
	json.Unmarshal([]byte(r.stdout), &list)
	if len(list) != 1 || list[0]["session_id"] != sid || list[0]["running"] != true || list[0]["mode"] != "pty" {
		t.Fatalf("ls after SIGTERM: %s %s", r.stdout, r.stderr)
	}

	first := startOnTerminal(t, bin, env, "command", "shell", sb, "--session", sid)
	first.WaitFor(0, `marker-5\r\n`) // the replay
	first.Send("echo $X\r")
	first.WaitFor(0, `kept\r\n`)

	second := startOnTerminal(t, bin, env, "shell", sb, "--session", sid, "--takeover")
	second.WaitFor(0, `kept\r\n`)
	if code := first.wait(); code != 125 {
		t.Errorf("evicted client: exit %d, want 125", code)
	}
	first.WaitFor(0, `osb: another client took session `+sid+` over`)
	if after := first.Termios(); after != first.before {
		t.Errorf("evicted client's terminal not restored")
	}
	second.Send("echo still-$X\r")
	second.WaitFor(0, `still-kept\r\n`)
	osb(t, bin, env, "command", "shell", "kill", sb, sid).expect(t, 0, "shell kill")
	if code := second.wait(); code != 125 {
		t.Errorf("client of a killed session: exit %d, want 125", code)
	}
	second.WaitFor(0, `osb: the shell was killed by a signal`)
}

// TestShellPipeMode streams a tar archive and exact binary data through
// pipes, as a script would.
func TestShellPipeMode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin, env, sb := newShellSandbox(t)
	in := make([]byte, 4<<20)
	for i := range in {
		in[i] = byte(i * 7)
	}
	for _, args := range [][]string{{"shell", sb, "--", "cat"}, {"command", "run", sb, "-i", "--", "cat"}} {
		cmd := command(t, bin, args...)
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(in)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || !bytes.Equal(stdout.Bytes(), in) || stderr.Len() != 0 {
			t.Errorf("osb %s: %v; %d bytes back (equal: %v); stderr %q", args[0], err, stdout.Len(), bytes.Equal(stdout.Bytes(), in), stderr.String())
		}
	}

	dir := t.TempDir()
	os.MkdirAll(dir+"/src/sub", 0o755)
	os.WriteFile(dir+"/src/sub/data.bin", in[:100000], 0o644)
	sh := command(t, "bash", "-c", `set -o pipefail; tar c -C "$1" src | "$2" command shell "$3" -- tar x -C /workspace`, "-", dir, bin, sb)
	sh.Env = env
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("tar through osb: %v %s", err, out)
	}
	check := command(t, bin, "command", "run", sb, "-i", "--", "sh", "-c", "cmp /workspace/src/sub/data.bin - && echo same")
	check.Env = env
	check.Stdin = bytes.NewReader(in[:100000])
	if out, err := check.CombinedOutput(); err != nil || string(out) != "same\n" {
		t.Errorf("the file unpacked in the sandbox: %v %q", err, out)
	}
}
