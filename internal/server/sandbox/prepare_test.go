//go:build linux

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A sandbox prepared ahead of any request (Prepare) runs its init before
// Start, in its cgroup with the stand-in limits; Use and Start then give it
// the request's environment and limits, as New and Start would have.
func TestPreparedSandboxTakesTheRequest(t *testing.T) {
	if iso := Probe(); !iso.Available {
		t.Skip("namespaces unavailable:", iso.Reason)
	}
	if cg := Cgroups(); !cg.Available {
		t.Skip("no cgroups here:", cg.Reason)
	}
	t.Parallel()
	s, err := New(Config{ID: randomID(t), Dir: filepath.Join(t.TempDir(), "sb"), Isolated: true, Agent: false})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Remove() })
	if err := s.Prepare(Limits{PIDs: 50, Memory: 256 << 20}, true); err != nil {
		t.Fatal(err)
	}
	if pids := s.PIDs(); len(pids) != 1 || !strings.Contains(cmdline(pids[0]), "osb-sandbox-init") {
		t.Fatalf("before Start the sandbox runs %v, want its init alone", pids)
	}
	if !s.Fits(Config{}) || s.Fits(Config{Rootfs: &Rootfs{}}) {
		t.Error("a sandbox prepared for the host's programs fits an image, or does not fit them")
	}
	s.Use(Config{Env: map[string]string{"FOO": "from the request"}, Limits: &Limits{PIDs: 77, Memory: 300 << 20}})
	if err := s.Start([]string{"sleep", "1000"}); err != nil {
		t.Fatal(err)
	}
	if out := run(t, s, CommandSpec{Shell: "echo $FOO; hostname; cat /proc/1/cmdline | tr '\\0' ' '; echo"}); out != "from the request\n"+s.ID()[:12]+"\nosb-sandbox-init \n" {
		t.Errorf("the sandbox says %q", out)
	}
	if got := s.cg.memoryLimit(); got != 300<<20 {
		t.Errorf("memory limit %d, want the request's %d", got, 300<<20)
	}
	if got := readInt(t, filepath.Join(s.cg.pidsDir, "procs", "pids.max")); got != 77 {
		t.Errorf("pids.max of the sandbox's processes %d, want the request's 77", got)
	}
}

// A prepared sandbox removed before Start leaves no process, no cgroup and
// no files.
func TestPreparedSandboxRemovedUnstarted(t *testing.T) {
	if iso := Probe(); !iso.Available {
		t.Skip("namespaces unavailable:", iso.Reason)
	}
	t.Parallel()
	for _, hostRoot := range []bool{true, false} {
		s, err := New(Config{ID: randomID(t), Dir: filepath.Join(t.TempDir(), "sb"), Isolated: true, Agent: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Prepare(Limits{PIDs: 50}, hostRoot); err != nil {
			t.Fatal(err)
		}
		pids := s.PIDs()
		var cgroups []string
		if s.cg != nil {
			for _, d := range s.cg.dirs {
				cgroups = append(cgroups, d)
			}
		}
		if err := s.Remove(); err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("pid %d survived", pid)
			}
		}
		for _, p := range append(cgroups, s.Dir()) {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s is still there (%v)", p, err)
			}
		}
	}
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(b)
}

func readInt(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// CloseOnExecExcept leaves the descriptors it is told to keep inheritable,
// and only those.
func TestCloseOnExecExcept(t *testing.T) {
	var fds []int
	for range 3 {
		var p [2]int
		if err := unix.Pipe(p[:]); err != nil {
			t.Fatal(err)
		}
		fds = append(fds, p[0], p[1])
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	keep := []int{fds[4], fds[1]}
	CloseOnExecExcept(keep...)
	for _, fd := range fds {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatal(err)
		}
		if cloexec, kept := flags&unix.FD_CLOEXEC != 0, slices.Contains(keep, fd); cloexec == kept {
			t.Errorf("descriptor %d: close-on-exec %v, kept %v", fd, cloexec, kept)
		}
	}
}
