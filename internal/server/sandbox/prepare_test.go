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

	"github.com/osb-dev/osb/internal/server/image/imagetest"
)

// A sandbox prepared ahead of any request (Prepare) runs its init before
// Start, in its cgroup with the stand-in limits; Use and Start then give it
// the request's environment and limits, as New and Start would have.
func TestPreparedSandboxTakesTheRequest(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	s, err := New(Config{ID: randomID(t), Dir: filepath.Join(t.TempDir(), "sb"), Isolated: true, Agent: false})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Remove() })
	if err := s.Prepare(Limits{PIDs: 50, Memory: 256 << 20}); err != nil {
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

// A sandbox prepared for an image has its root mounted before any
// request: it fits a request for that image only, and once started runs
// on it with what the request says (its environment, its CA).
func TestPreparedImageSandbox(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	layers := imageLayers(t, imagetest.Layer(t, imagetest.Entry{Name: "etc/motd", Body: "from the image\n"}))
	image := func() *Rootfs { return &Rootfs{Layers: slices.Clone(layers), WorkDir: "/srv/app"} }
	s, err := New(Config{ID: randomID(t), Dir: filepath.Join(t.TempDir(), "sb"), Isolated: true, Rootfs: image()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Remove() })
	if err := s.Prepare(Limits{PIDs: 50}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the prepared init to mount its image's overlay", func() bool { return hasOverlay(s.PIDs()[0]) })
	other := image()
	other.User = &User{UID: 1, GID: 1}
	for _, r := range []*Rootfs{nil, other, {Layers: layers[:len(layers)-1], WorkDir: "/srv/app"}} {
		if s.Fits(Config{Rootfs: r}) {
			t.Errorf("a sandbox prepared for %+v fits %+v", image(), r)
		}
	}
	if !s.Fits(Config{Rootfs: image()}) {
		t.Error("a prepared sandbox does not fit its own image")
	}
	ca := "-----BEGIN CERTIFICATE-----\nfrom the request\n-----END CERTIFICATE-----\n"
	s.Use(Config{Env: map[string]string{"FOO": "from the request"}, Limits: &Limits{PIDs: 50}, Rootfs: image(), TrustedCA: []byte(ca)})
	if err := s.Start([]string{"sleep", "1000"}); err != nil {
		t.Fatal(err)
	}
	out := run(t, s, CommandSpec{Argv: []string{"/bin/sh", "-c", "echo $FOO; cat /etc/motd; pwd; tail -n 3 " + CABundle}})
	if want := "from the request\nfrom the image\n/srv/app\n" + ca; out != want {
		t.Errorf("the sandbox says %q, want %q", out, want)
	}
}

// hasOverlay says whether process pid sees an overlay mounted.
func hasOverlay(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/mountinfo")
	return strings.Contains(string(b), " - overlay ")
}

// When the init cannot build the sandbox, Start's error is its reason.
func TestStartSaysWhyTheRootFailed(t *testing.T) {
	needIsolation(t)
	t.Parallel()
	layers := imageLayers(t, imagetest.Layer(t, imagetest.Entry{Name: "etc/motd", Body: "a file\n"}))
	s, err := New(Config{ID: randomID(t), Dir: filepath.Join(t.TempDir(), "sb"), Isolated: true,
		Rootfs: &Rootfs{Layers: layers, WorkDir: "/etc/motd/app"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Remove()
	err = s.Start([]string{"sleep", "1000"})
	const want = "sandbox setup failed: osb sandbox init: working directory /etc/motd/app: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Start: %v, want an error starting %q", err, want)
	}
}

// A prepared sandbox removed before Start leaves no process, no cgroup and
// no files.
func TestPreparedSandboxRemovedUnstarted(t *testing.T) {
	needIsolation(t)
	t.Parallel()
	for _, root := range []*Rootfs{nil, {Layers: imageLayers(t)}} {
		s, err := New(Config{ID: randomID(t), Dir: filepath.Join(t.TempDir(), "sb"), Isolated: true, Agent: true, Rootfs: root})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Prepare(Limits{PIDs: 50}); err != nil {
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
