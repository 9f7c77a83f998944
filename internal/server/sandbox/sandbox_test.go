//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/osb-dev/osb/internal/testwait"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// modes runs a test isolated (where this machine allows it) and unisolated.
func modes(t *testing.T, f func(t *testing.T, isolated bool)) {
	t.Run("unisolated", func(t *testing.T) { t.Parallel(); f(t, false) })
	t.Run("isolated", func(t *testing.T) {
		needIsolation(t)
		t.Parallel()
		f(t, true)
	})
}

func start(t *testing.T, isolated bool) *Sandbox {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sb")
	s, err := New(Config{ID: randomID(t), Dir: dir, Isolated: isolated, Env: map[string]string{"FOO": "bar"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start([]string{"tail", "-f", "/dev/null"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Remove() })
	return s
}

func randomID(t *testing.T) string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func run(t *testing.T, s *Sandbox, spec CommandSpec) string {
	t.Helper()
	cmd, err := s.Command(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v: %s", spec, err, out.String())
	}
	return out.String()
}

func TestResolvePath(t *testing.T) {
	s := &Sandbox{}
	cases := map[string]string{
		"/workspace/a.txt": "workspace/a.txt",
		"a/b":              "workspace/a/b",
		"":                 "workspace",
		"/tmp/../tmp/x":    "tmp/x",
		"../tmp/y":         "tmp/y",
		"/root":            "root",
	}
	for in, want := range cases {
		got, err := s.ResolvePath(in)
		if err != nil || got != want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"/etc/passwd", "../../etc", "/", "/workspacex", "a\x00b"} {
		if got, err := s.ResolvePath(bad); err == nil {
			t.Errorf("ResolvePath(%q) = %q, want error", bad, got)
		}
	}
}

func TestCommandSeesSandboxFiles(t *testing.T) {
	modes(t, func(t *testing.T, isolated bool) {
		s := start(t, isolated)
		// A relative write lands in the workspace; /tmp is the sandbox's own in isolated mode.
		run(t, s, CommandSpec{Shell: "echo hi > x.txt && mkdir -p sub && echo $FOO > sub/env"})
		b, err := s.FS().ReadFile("workspace/x.txt")
		if err != nil || string(b) != "hi\n" {
			t.Fatalf("workspace/x.txt = %q, %v", b, err)
		}
		if out := run(t, s, CommandSpec{Argv: []string{"pwd"}, Cwd: "/workspace/sub"}); !strings.HasSuffix(strings.TrimSpace(out), "workspace/sub") {
			t.Errorf("pwd = %q", out)
		}
		if out := run(t, s, CommandSpec{Argv: []string{"cat", "env"}, Cwd: "/workspace/sub", Env: map[string]string{"X": "1"}}); out != "bar\n" {
			t.Errorf("env file = %q", out)
		}
		if isolated {
			run(t, s, CommandSpec{Shell: "echo t > /tmp/y && echo w > /workspace/w"})
			if b, _ := s.FS().ReadFile("tmp/y"); string(b) != "t\n" {
				t.Errorf("tmp/y = %q", b)
			}
			if b, _ := s.FS().ReadFile("workspace/w"); string(b) != "w\n" {
				t.Errorf("workspace/w = %q", b)
			}
			if out := run(t, s, CommandSpec{Shell: "grep -c osb-sandbox-init /proc/1/cmdline; hostname; touch /usr/osb-test 2>/dev/null && echo writable || echo ro"}); out != "1\n"+s.ID()[:12]+"\nro\n" {
				t.Errorf("isolation checks = %q", out)
			}
		}
	})
}

func TestEnvDoesNotLeakServerEnv(t *testing.T) {
	t.Setenv("OPEN_SANDBOX_API_KEY", "secret")
	s := start(t, false)
	if out := run(t, s, CommandSpec{Shell: "echo ${OPEN_SANDBOX_API_KEY:-none} $OPENSANDBOX_ID"}); out != "none "+s.ID()+"\n" {
		t.Errorf("env = %q", out)
	}
}

func TestKillLeavesNoProcess(t *testing.T) {
	modes(t, func(t *testing.T, isolated bool) {
		s := start(t, isolated)
		// A daemon that leaves the process group, and a process ignoring SIGTERM.
		run(t, s, CommandSpec{Shell: "setsid sleep 300 >/dev/null 2>&1 & (trap '' TERM; exec sleep 301) >/dev/null 2>&1 &"})
		var pids []int
		waitFor(t, "init, tail and 2 sleeps", func() bool { pids = s.PIDs(); return len(pids) >= 4 })
		if err := s.Remove(); err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("pid %d survived", pid)
			}
		}
		if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("dir still there: %v", err)
		}
		if _, err := s.Command(context.Background(), CommandSpec{Shell: "true"}); !errors.Is(err, ErrGone) {
			t.Errorf("Command after Kill: %v", err)
		}
	})
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.state != 'Z'
}

func TestPauseResume(t *testing.T) {
	modes(t, func(t *testing.T, isolated bool) {
		s := start(t, isolated)
		var pids int
		// Wait until tail itself runs: a process caught by SIGSTOP while
		// it starts leaves its parent waiting in the kernel (vfork), where
		// it cannot be stopped until the child goes on.
		// Count and look in one listing: tail may start between two.
		waitFor(t, "init and tail", func() bool {
			list := s.PIDs()
			pids = len(list)
			return pids >= 2 && slices.ContainsFunc(list, func(p int) bool {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
				return strings.HasPrefix(string(b), "tail\x00") || strings.Contains(string(b), "/tail\x00")
			})
		})
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		if got := len(s.PIDs()); got != pids {
			t.Fatalf("%d processes after pause, want %d", got, pids)
		}
		for _, pid := range s.PIDs() {
			if st, err := readStat(pid); err == nil && st.state != 'T' && st.state != 'Z' {
				t.Errorf("pid %d state %c, want T (stopped)", pid, st.state)
			}
		}
		if err := s.Resume(); err != nil {
			t.Fatal(err)
		}
		for _, pid := range s.PIDs() {
			if st, err := readStat(pid); err != nil || st.state == 'T' {
				t.Errorf("pid %d still stopped", pid)
			}
		}
	})
}

// A pause whose wait for the processes to stop is slow (here: held by the
// test for as long as it likes) holds up no one else: the sandbox's own
// readers and Kill, and another sandbox's pause and resume, all finish
// while it waits.
func TestSlowPauseHoldsUpNoOtherOperation(t *testing.T) {
	slow, other := start(t, false), start(t, false)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow.stopWaitHook = func() { once.Do(func() { close(held); <-release }) }
	paused := make(chan error, 1)
	go func() { paused <- slow.Pause() }()
	<-held
	testwait.Finishes(t, "Paused of the pausing sandbox", func() {
		if !slow.Paused() {
			t.Error("Paused() = false while the pause is under way")
		}
	})
	testwait.Finishes(t, "another sandbox's pause and resume", func() {
		if err := other.Pause(); err != nil {
			t.Error(err)
		}
		if !other.Paused() {
			t.Error("other sandbox not paused")
		}
		if err := other.Resume(); err != nil {
			t.Error(err)
		}
	})
	testwait.Finishes(t, "Kill of the pausing sandbox", func() {
		if err := slow.Kill(); err != nil {
			t.Error(err)
		}
	})
	close(release)
	testwait.Finishes(t, "the held pause, once the sandbox is killed", func() { <-paused })
}

func TestCancelKillsGroup(t *testing.T) {
	modes(t, func(t *testing.T, isolated bool) {
		s := start(t, isolated)
		ctx, cancel := context.WithCancel(context.Background())
		cmd, err := s.Command(ctx, CommandSpec{Shell: "sleep 300; echo never"})
		if err != nil {
			t.Fatal(err)
		}
		before := s.PIDs()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the shell's child: killing the shell alone would leave it running.
		var child int
		waitFor(t, "the sleep child", func() bool { child = newProcess(s, before, "sleep"); return child != 0 })
		cancel()
		err = cmd.Wait()

		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("Wait = %v", err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() && ws.ExitStatus() == 0 {
			t.Errorf("status %v", ws)
		}
		waitFor(t, "the sleep child to die", func() bool { return !alive(child) })
	})
}

// newProcess returns the pid of a sandbox process named comm that is not
// in before, or 0.
func newProcess(s *Sandbox, before []int, comm string) int {
	for _, pid := range s.PIDs() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && strings.TrimSpace(string(b)) == comm && !slices.Contains(before, pid) {
			return pid
		}
	}
	return 0
}

// needIsolation skips a test where sandboxes cannot have namespaces.
func needIsolation(t *testing.T) {
	t.Helper()
	if iso := Probe(); !iso.Available {
		t.Skip("namespaces unavailable:", iso.Reason)
	}
}

// needCgroups skips a test where isolated sandboxes cannot have cgroups.
func needCgroups(t *testing.T) {
	t.Helper()
	needIsolation(t)
	if cg := Cgroups(); !cg.Available {
		t.Skip("no cgroups here:", cg.Reason)
	}
}

// waitFor polls cond until it holds, and fails the test if that does not
// happen within a generous deadline (the machine may be loaded).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

func TestUsage(t *testing.T) {
	s := start(t, false)
	var u Usage
	// The cgroup may count a process's memory a moment after the process
	// shows in it.
	waitFor(t, "init and tail, using memory", func() bool { u = s.Usage(); return u.Processes >= 2 && u.RSSBytes > 0 })
	if total, err := MemTotalBytes(); err != nil || total == 0 {
		t.Errorf("MemTotalBytes = %d, %v", total, err)
	}
}

func TestCommandAsUser(t *testing.T) {
	modes(t, func(t *testing.T, isolated bool) {
		if rootless {
			t.Skip("a rootless server runs everything as its own user")
		}
		s := start(t, isolated)
		// Unisolated, another user cannot enter the server's private
		// data dir: it runs in a host directory.
		cwd := map[bool]string{true: "/tmp", false: "/"}[isolated]
		uid := uint32(65534)
		// No supplementary groups: only the user's own group is left.
		if out := run(t, s, CommandSpec{Shell: "id -u; id -G", Cwd: cwd, UID: &uid}); out != "65534\n65534\n" {
			t.Errorf("id -u; id -G = %q", out)
		}
	})
}

// A pid namespace's number is given to a namespace made later once the
// namespace is gone. A sandbox whose init has died holds its own until it
// is removed, and a removed one is never found to own processes by it: a
// scan for them (on a host without cgroups, rootless, or once the cgroup
// is gone) would otherwise take another namespace's processes for the
// sandbox's, and its kill end them (another sandbox's init, in a loaded
// run).
func TestDeadSandboxKeepsItsPidNamespace(t *testing.T) {
	needIsolation(t)
	t.Parallel()
	a := start(t, true)
	dead := a.anchor.Load()
	kill(dead.initPID, syscall.SIGKILL)
	testwait.Finishes(t, "the init's end", func() { <-dead.exited })
	newPidNamespaces(t, func(pid int, ns string) {
		if ns == dead.pidNS {
			t.Fatalf("process %d is in a new pid namespace with the dead sandbox's number %s", pid, ns)
		}
	})
	if err := a.Remove(); err != nil {
		t.Fatal(err)
	}
	newPidNamespaces(t, func(pid int, ns string) {
		if pids := a.PIDs(); len(pids) > 0 {
			t.Fatalf("the removed sandbox owns processes %v (process %d is in %s, it had %s)", pids, pid, ns, dead.pidNS)
		}
	})
}

// newPidNamespaces makes pid namespaces one after the other for two
// seconds (a freed number is given to one of them, not at once), and
// calls f while each has a process, with that process and the namespace.
func newPidNamespaces(t *testing.T, f func(pid int, ns string)) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		p := exec.Command("sleep", "5")
		p.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() { p.Process.Kill(); p.Wait() }()
			ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", p.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			f(p.Process.Pid, ns)
		}()
	}
}
