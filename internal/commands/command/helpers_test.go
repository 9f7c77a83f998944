package command_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/server"
)

// newSandbox starts a local server (sandboxes in namespaces where the machine
// allows it, as `osb server` runs them) and creates one sandbox.
func newSandbox(t *testing.T, opts ...func(*server.Options)) (*cmdtest.Env, string) {
	t.Helper()
	env := cmdtest.New(t, opts...)
	return env, env.NewSandbox()
}

// expect fails unless r has exactly this exit code, stdout and stderr.
func expect(t *testing.T, r cmdtest.Result, code int, stdout, stderr string) {
	t.Helper()
	if r.Code != code || r.Stdout != stdout || r.Stderr != stderr {
		t.Errorf("got exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr, code, stdout, stderr)
	}
}

// piped is an osb command line running in-process with its stdout on a
// pipe, so a test can read the output while the command still runs.
type piped struct {
	pipe   *io.PipeReader
	out    *bufio.Reader
	stderr *cmdtest.SyncBuffer
	cancel context.CancelFunc // what the first Ctrl-C does to the command
	done   chan int           // the exit code, once it has ended
}

// startPiped runs an osb command line in-process against env's server.
func startPiped(t *testing.T, env *cmdtest.Env, args ...string) *piped {
	t.Helper()
	pr, pw := io.Pipe()
	ios, _, _, _ := iostreams.Test()
	stderr := &cmdtest.SyncBuffer{}
	ios.Out, ios.ErrOut = pw, stderr
	f := env.Factory(ios)
	ctx, cancel := context.WithCancel(context.Background())
	p := &piped{pipe: pr, out: bufio.NewReader(pr), stderr: stderr, cancel: cancel, done: make(chan int, 1)}
	go func() {
		code := commands.Run(ctx, f, args)
		pw.Close()
		p.done <- code
	}()
	t.Cleanup(func() {
		cancel()
		io.Copy(io.Discard, pr)
	})
	return p
}

// line reads one line of the command's stdout.
func (p *piped) line(t *testing.T) string {
	t.Helper()
	s, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading output: %q, %v (stderr %q)", s, err, p.stderr.String())
	}
	return s
}

// wait returns the exit code and the rest of stdout.
func (p *piped) wait(t *testing.T) (int, string) {
	t.Helper()
	rest, _ := io.ReadAll(p.out)
	select {
	case code := <-p.done:
		return code, string(rest)
	case <-time.After(time.Minute):
		t.Fatal("the command did not end")
	}
	return 0, ""
}

// procsWith lists host processes whose command line contains token.
func procsWith(token string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmdline), token) && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// waitNoProcs waits until no process carries token, and fails if some
// still do after a generous while.
func waitNoProcs(t *testing.T, token string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(procsWith(token)) == 0 {
			return
		}
	}
	t.Fatalf("processes with %q still running: %v", token, procsWith(token))
}
