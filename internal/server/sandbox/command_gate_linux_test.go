package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command killed (by its timeout, say) after it started but before its
// gate opened ends as killed, the way a user's timeout reads, not as a
// failure to confine it.
func TestGatedCommandKilledBeforeItsGateEndsAsKilled(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", oomFirst, "sh", "sleep", "30")
	killFirst := func(pid int) error {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return err
		}
		waitZombie(t, pid)
		return nil
	}
	if err := startGated(cmd, killFirst); err != nil {
		t.Fatalf("startGated: %v, want the start to stand and Wait to tell how it ended", err)
	}
	err := cmd.Wait()
	if err == nil || err.Error() != "signal: killed" {
		t.Fatalf("Wait: %v, want signal: killed", err)
	}
}

// waitZombie waits until pid has exited (a zombie nobody reaped yet).
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatalf("reading the state of %d: %v", pid, err)
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d still running after 30 s", pid)
}

// Commands that end while the init moves them into the cgroup of the
// sandbox's processes, through the same link and cgroup files as in a
// sandbox, just before the move or just after it, before the gate opens:
// each ends as it would have anyway (killed, or its own exit code),
// startGated reports no failure to confine it (no "broken pipe"), and
// nothing of it is left running.
func TestCommandEndingWhileMovedEndsAsItWould(t *testing.T) {
	if os.Geteuid() != 0 || !Cgroups().Available {
		t.Skip("needs root and cgroups")
	}
	link := confineLink(t)
	kill := func(t *testing.T, pid int) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitZombie(t, pid)
	}
	cases := []struct {
		name string
		argv []string
		end  func(t *testing.T, pid int) // how it ends; nil: by itself
		want string
	}{
		{"killed", []string{"sh", "-c", oomFirst, "sh", "sleep", "30"}, kill, "signal: killed"},
		{"no gate, killed", []string{"sleep", "30"}, kill, "signal: killed"},
		{"no gate, exits", []string{"sh", "-c", "exit 3"}, waitZombie, "exit status 3"},
	}
	for _, c := range cases {
		for _, after := range []bool{false, true} {
			name := c.name + " before the move"
			if after {
				name = c.name + " after the move"
			}
			t.Run(name, func(t *testing.T) {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				move := func(pid int) error {
					if !after {
						c.end(t, pid)
					}
					err := link.move(pid)
					if after {
						c.end(t, pid)
					}
					return err
				}
				if err := startGated(cmd, move); err != nil {
					t.Fatalf("startGated: %v, want the start to stand and Wait to tell how it ended", err)
				}
				pid := cmd.Process.Pid
				if err := cmd.Wait(); err == nil || err.Error() != c.want {
					t.Fatalf("Wait: %v, want %s", err, c.want)
				}
				if err := syscall.Kill(-pid, 0); err != syscall.ESRCH {
					t.Fatalf("process group %d: %v, want it gone", pid, err)
				}
			})
		}
	}
}

// A command the init refuses to move never runs, startGated says why, and
// nothing of it is left running.
func TestCommandRefusedItsMoveIsGone(t *testing.T) {
	if os.Geteuid() != 0 || !Cgroups().Available {
		t.Skip("needs root and cgroups")
	}
	link := confineLink(t)
	cmd := exec.Command("sh", "-c", oomFirst, "sh", "sh", "-c", "echo ran >&2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t.Cleanup(func() { agentPID.Store(0) })
	refused := func(pid int) error {
		agentPID.Store(int64(pid)) // the init refuses to move execd
		return link.move(pid)
	}
	err := startGated(cmd, refused)
	if err == nil || !strings.HasPrefix(err.Error(), "confining the process: refused: ") {
		t.Fatalf("startGated: %v, want it refused", err)
	}
	if err := syscall.Kill(-cmd.Process.Pid, 0); err != syscall.ESRCH {
		t.Errorf("process group %d: %v, want it gone", cmd.Process.Pid, err)
	}
	if stderr.String() != "" {
		t.Errorf("the refused command ran: %q", stderr.String())
	}
}

// confineLink is an agent's link to an init that moves processes into a
// cgroup of its own, made for the test, as a sandbox's init does.
func confineLink(t *testing.T) *initLink {
	t.Helper()
	cg, err := newCgroup("gate-test-"+strconv.Itoa(os.Getpid()), Limits{PIDs: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.remove() })
	procs, reserve, err := cg.reserveFiles()
	if err != nil || procs == nil {
		t.Fatalf("cgroup files: %v", err)
	}
	confiner = &reserveCgroups{procs: procs, agents: reserve}
	t.Cleanup(func() { confiner = nil; procs.Close(); reserve.Close() })
	mine, theirs, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	go serveConfine(theirs)
	t.Cleanup(func() { mine.Close() })
	return &initLink{f: mine}
}
