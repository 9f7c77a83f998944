//go:build linux

package command_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// bothServers runs test against osb server and against the real execd
// binary (the latter skipped, saying why, where it cannot run).
func bothServers(t *testing.T, test func(t *testing.T, env *cmdtest.Env, sb string)) {
	t.Run("osb server", func(t *testing.T) {
		t.Parallel()
		env, sb := newSandbox(t, servertest.NoIsolation)
		test(t, env, sb)
	})
	t.Run("real execd", func(t *testing.T) {
		t.Parallel()
		test(t, cmdtest.RealExecd(t), cmdtest.RealExecdSandbox)
	})
}

func seqOutput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// A command's whole output and exit code arrive, every time: a real execd
// sends the exit frame before the last output, and has no stdin_eof.
func TestShellPipeModeOutputWhole(t *testing.T) {
	t.Parallel()
	want := seqOutput(200000)
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		for i := range 4 {
			r := env.Run("command", "shell", sb, "--", "sh", "-c", "seq 1 200000; exit 7")
			if r.Code != 7 || r.Stdout != want || r.Stderr != "" {
				t.Fatalf("run %d: exit %d, stdout %d bytes (want %d, equal %v), stderr %q", i, r.Code, len(r.Stdout), len(want), r.Stdout == want, r.Stderr)
			}
		}
	})
}

// stdin goes to the command to its end, byte for byte, and the command
// sees the end (cat ends); its stderr and exit code stay its own.
func TestShellPipeModeStdinToTheEnd(t *testing.T) {
	t.Parallel()
	in := make([]byte, 8<<20)
	rand.Read(in)
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		r := env.RunStdin(string(in), "command", "shell", sb, "--", "sh", "-c", "cat; echo done >&2; exit 3")
		if r.Code != 3 || r.Stdout != string(in) || r.Stderr != "done\n" {
			t.Errorf("exit %d, stdout %d bytes (equal: %v), stderr %q", r.Code, len(r.Stdout), r.Stdout == string(in), r.Stderr)
		}
		expect(t, env.RunStdin("echo $((6*7))\nexit 2\n", "shell", sb), 2, "42\n", "")
		expect(t, env.RunStdin("a\nb\n", "command", "run", sb, "-i", "--", "wc", "-l"), 0, "2\n", "")
		expect(t, env.RunStdin("hello\n", "command", "run", sb, "--stdin", "--", "wc", "-c"), 0, "6\n", "")
	})
}

// A command that ends before reading its input ends the run with its own
// exit code: input stops, quietly, as a local pipe's writer stops.
func TestShellCommandEndsBeforeItsInput(t *testing.T) {
	t.Parallel()
	in := make([]byte, 3000000)
	rand.Read(in)
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		expect(t, env.RunStdin(string(in), "command", "shell", sb, "--", "sh", "-c", "echo early; exit 3"), 3, "early\n", "")
	})
}

// Without -i, command run never reads stdin (a read loop keeps its lines)
// and the command's input is empty; shell -n does the same.
func TestStdinOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		for _, args := range [][]string{
			{"command", "run", sb, "--", "wc", "-c"},
			{"command", "shell", sb, "-n", "--", "wc", "-c"},
			{"shell", sb, "--no-stdin", "--", "wc", "-c"},
		} {
			stdin := strings.NewReader("line 1\nline 2\n")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			r := env.RunContext(ctx, stdin, args...)
			cancel()
			expect(t, r, 0, "0\n", "")
			if stdin.Len() != 14 {
				t.Errorf("osb %s read %d bytes of its stdin", strings.Join(args, " "), 14-stdin.Len())
			}
		}
	})
}

func TestRunStdinUsageErrors(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t) // no server: a usage error sends no request
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "127.0.0.1:1"
	expect(t, env.RunStdin("data", "command", "run", "sb1", "-i", "-u", "1000", "--", "cat"), 2, "",
		"Error: --stdin cannot be used with --user: stdin goes through execd's PTY API, which has no user; use 'osb command shell sb1 -- COMMAND' to run as the default user\n")
	expect(t, env.RunStdin("data", "command", "run", "sb1", "-i", "-d", "--", "cat"), 2, "",
		"Error: --stdin cannot be used with --background: a background command gets no input\n")
	// Without -i stdin is not the run's business: these go ahead (and fail to connect).
	for _, args := range [][]string{{"-u", "1000"}, {"-d"}} {
		r := env.RunStdin("data", append(append([]string{"command", "run", "sb1"}, args...), "--", "cat")...)
		if r.Code == 2 {
			t.Errorf("%v without -i: a usage error: %s", args, r.Stderr)
		}
	}
}

// The markers that end a command on a real execd never show, even when
// the output ends with bytes that begin one.
func TestShellOutputThatLooksLikeAMarker(t *testing.T) {
	t.Parallel()
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		r := env.Run("command", "shell", sb, "--", "printf", `a\000osb-end-\000b\000osb-`)
		if r.Code != 0 || !bytes.Equal([]byte(r.Stdout), []byte("a\x00osb-end-\x00b\x00osb-")) || r.Stderr != "" {
			t.Errorf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
	})
}

// shellThroughProxy is `osb command shell` on a pseudo-terminal whose
// connections go through a proxy the test cuts; at is where the prompt set
// for the test first shows.
type shellThroughProxy struct {
	t     *testing.T
	proxy *cutProxy
	scr   *cmdtest.Terminal
	at    int
	done  chan int
	// before is the local terminal's state before osb ran; exit checks
	// that osb restored it.
	before unix.Termios
}

func startShellThroughProxy(t *testing.T, env *cmdtest.Env, sb string) *shellThroughProxy {
	sh := &shellThroughProxy{t: t, proxy: newCutProxy(t), scr: cmdtest.NewTerminal(t, 100, 30), done: make(chan int, 1)}
	env.ClientOptions = func(o *client.Options) {
		o.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: sh.proxy.dial}}
	}
	sh.before = sh.scr.Termios()
	ios := iostreams.Files(sh.scr.Slave, sh.scr.Slave, sh.scr.Slave, func(string) string { return "" })
	go func() {
		sh.done <- commands.Run(context.Background(), env.Factory(ios), []string{"command", "shell", sb})
	}()
	sh.scr.Send("PS1='RE''ADY> '\r")
	sh.at = sh.scr.WaitFor(0, `READY> `)
	return sh
}

// exit ends the remote shell with code, and fails unless osb exits with it.
func (sh *shellThroughProxy) exit(code int) {
	sh.t.Helper()
	sh.scr.Send(fmt.Sprintf("exit %d\r", code))
	select {
	case got := <-sh.done:
		if got != code {
			sh.t.Errorf("exit %d, want the shell's %d", got, code)
		}
	case <-time.After(cmdtest.ScreenWait):
		sh.t.Fatal("osb did not end after the shell exited")
	}
	if after := sh.scr.Termios(); after != sh.before {
		sh.t.Errorf("terminal not restored:\nbefore %+v\nafter  %+v", sh.before, after)
	}
}

// Input typed while a terminal session's connection is down is delivered
// once, in order, after "reconnected".
func TestShellInputTypedWhileDisconnected(t *testing.T) {
	t.Parallel()
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		sh := startShellThroughProxy(t, env, sb)
		proxy, scr, at := sh.proxy, sh.scr, sh.at
		proxy.setDown(true)
		at = scr.WaitFor(at, `osb: connection lost`)
		scr.Send("echo TY''PED-1\r")
		scr.Send("echo TY''PED-2\r")
		proxy.setDown(false)
		at = scr.WaitFor(at, `osb: reconnected`)
		end := scr.WaitFor(at, `TYPED-2\r\n`)
		scr.WaitFor(end, `READY> `)
		out := scr.Text()[at:]
		if n1, n2 := strings.Count(out, "TYPED-1\r\n"), strings.Count(out, "TYPED-2\r\n"); n1 != 1 || n2 != 1 || strings.Index(out, "TYPED-1\r\n") > strings.Index(out, "TYPED-2\r\n") {
			t.Errorf("typed lines ran %d and %d times, or out of order:\n%q", n1, n2, out)
		}
		sh.exit(4)
	})
}

// Input sent into a connection that had silently stopped carrying it (a
// stalled network, then the cut) is not sent twice, and osb says it may
// not have arrived.
func TestShellInputLostInAStalledConnection(t *testing.T) {
	t.Parallel()
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		sh := startShellThroughProxy(t, env, sb)
		proxy, scr, at := sh.proxy, sh.scr, sh.at
		proxy.drop()
		keys := "echo ST''ALLED\r"
		scr.Send(keys)
		cmdtest.Eventually(t, "osb sends the keys", func() bool { return proxy.droppedBytes() >= len(keys) })
		proxy.cut()
		at = scr.WaitFor(at, `osb: reconnected`)
		scr.Send("echo AF''TER\r")
		scr.WaitFor(at, `AFTER\r\n`)
		out := scr.Text()
		if !strings.Contains(out, "bytes of input sent may not have arrived") || strings.Count(out, "STALLED\r\n") > 1 {
			t.Errorf("the keys sent into the stalled connection:\n%q", out)
		}
		sh.exit(4)
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	cmdtest.RemoveOsb()
	os.Exit(code)
}

// The loop of a script that reads a list runs every line: command run
// leaves the loop's stdin alone.
func TestReadLoopRunsEveryLine(t *testing.T) {
	t.Parallel()
	bin := cmdtest.BuildOsb(t)
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		list := cmdtest.WriteFile(t, "list", "one\ntwo\nthree\n")
		sh := exec.Command("bash", "-c", `while read -r w; do "$1" command run "$2" -- echo "got $w"; done < "$3"`, "-", bin, sb, list)
		sh.Env = []string{"PATH=" + os.Getenv("PATH")}
		for k, v := range env.Vars {
			sh.Env = append(sh.Env, k+"="+v)
		}
		out, err := sh.CombinedOutput()
		if err != nil || string(out) != "got one\ngot two\ngot three\n" {
			t.Errorf("%v: %q", err, out)
		}
	})
}

// Ctrl-C in pipe mode stops the remote command, also through the wrapper
// a real execd's commands run in.
func TestShellPipeModeCtrlC(t *testing.T) {
	t.Parallel()
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		token := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1000000)
		p := startPiped(t, env, "command", "shell", sb, "--", "sh", "-c", "echo ready; exec sleep "+token)
		if got := p.line(t); got != "ready\n" {
			t.Fatalf("first line %q", got)
		}
		p.cancel() // what Ctrl-C does to the command's context
		code, rest := p.wait(t)
		want := regexp.MustCompile(`^Stopping the remote command \(Ctrl-C again to stop waiting\)\.\.\.\nInterrupted: session [0-9a-f-]{36} was stopped\.\n$`)
		if code != 130 || rest != "" || !want.MatchString(p.stderr.String()) {
			t.Errorf("exit %d, stdout %q, stderr %q", code, rest, p.stderr.String())
		}
		waitNoProcs(t, token)
	})
}

// command run -i keeps what command run promises: -o json's one object
// and --timeout's 124, on both servers.
func TestRunStdinJSONAndTimeout(t *testing.T) {
	t.Parallel()
	bothServers(t, func(t *testing.T, env *cmdtest.Env, sb string) {
		r := env.RunStdin("abc", "command", "run", sb, "-i", "-o", "json", "--", "sh", "-c", "cat; echo e >&2; exit 2")
		var res map[string]any
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 2 {
			t.Fatalf("-o json: exit %d %q %q", r.Code, r.Stdout, r.Stderr)
		}
		if res["stdout"] != "abc" || res["stderr"] != "e\n" || res["exit_code"] != 2.0 {
			t.Errorf("-o json result: %v", res)
		}
		expect(t, env.RunStdin("x", "command", "run", sb, "-i", "-t", "1s", "--", "sleep", "30"), 124, "",
			"Error: the command did not finish within 1s and was killed\n")
	})
}
