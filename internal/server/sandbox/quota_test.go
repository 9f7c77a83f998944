//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// quotaProbeEnv makes this test binary, run inside a sandbox, the program
// that takes or tries the kernel's per-user resources (see quotaProbe).
const quotaProbeEnv = "OSB_TEST_QUOTA_PROBE"

func init() {
	if mode := os.Getenv(quotaProbeEnv); mode != "" {
		os.Exit(quotaProbe(mode, os.Stdout))
	}
}

// quotaProbe "hold" takes every inotify instance, message-queue byte and
// key the kernel lets its user have, reports how each ran out, and holds
// them until its stdin closes; "try" takes one of each and reports.
func quotaProbe(mode string, out io.Writer) int {
	limit := 1
	if mode == "hold" {
		limit = 1 << 20
	}
	var report []string
	report = append(report, "inotify "+takeUntil(limit, func(int) error {
		_, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		return err
	}))
	report = append(report, "mqueue "+takeUntil(limit, func(i int) error {
		name, err := unix.BytePtrFromString(fmt.Sprintf("osb-quota-%s-%d", mode, i))
		if err != nil {
			return err
		}
		fd, _, errno := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR, 0o600, 0, 0, 0)
		if errno != 0 {
			return errno
		}
		if mode != "hold" {
			unix.Close(int(fd))
		}
		return nil
	}))
	report = append(report, "keys "+takeUntil(limit, func(i int) error {
		_, err := unix.AddKey("user", fmt.Sprintf("osb-quota-%s-%d", mode, i), []byte("x"), unix.KEY_SPEC_USER_KEYRING)
		return err
	}))
	fmt.Fprintln(out, strings.Join(report, ", "))
	if mode == "hold" {
		io.Copy(io.Discard, os.Stdin)
	}
	return 0
}

// takeUntil calls take until it fails or limit calls succeeded: "ok" when
// none failed, else how many succeeded and the error that stopped them.
func takeUntil(limit int, take func(int) error) string {
	for i := range limit {
		if err := take(i); err != nil {
			var errno unix.Errno
			if errors.As(err, &errno) {
				return fmt.Sprintf("%d then %s", i, unix.ErrnoName(errno))
			}
			return fmt.Sprintf("%d then %v", i, err)
		}
	}
	return "ok"
}

// TestSandboxesDoNotShareUserQuotas is the attack of a sandbox that takes
// every inotify instance, message-queue byte and key its user may have:
// another sandbox, and root on the host, still get theirs.
func TestSandboxesDoNotShareUserQuotas(t *testing.T) {
	needOwnIDs(t)
	greedy, other := start(t, true), start(t, true)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Sandbox{greedy, other} {
		if err := copyFile(self, filepath.Join(s.FSDir(), "workspace", "probe"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold, err := greedy.Command(ctx, CommandSpec{Argv: []string{"/workspace/probe"}, Env: map[string]string{quotaProbeEnv: "hold"}})
	if err != nil {
		t.Fatal(err)
	}
	release, err := hold.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := hold.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hold.Stderr = os.Stderr
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { release.Close(); hold.Wait() }()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	var held string
	select {
	case held = <-lines:
	case <-time.After(time.Minute):
		t.Fatal("the greedy sandbox never reported what it holds")
	}
	// Each ran out on the kernel's per-user limit, not on something else.
	// (The probe runs from the host, by nsenter: without the init's
	// filter that refuses the key syscalls, keys_linux.go.)
	for _, want := range []string{"inotify ", " then EMFILE", "mqueue ", "keys ", " then EDQUOT"} {
		if !strings.Contains(held, want) {
			t.Fatalf("greedy sandbox: %q, want %q in it", held, want)
		}
	}
	// Its own pool: every instance a host user may have, none taken by
	// the server's user or another sandbox.
	if max, err := os.ReadFile("/proc/sys/fs/inotify/max_user_instances"); err == nil {
		if want := "inotify " + strings.TrimSpace(string(max)) + " then EMFILE"; !strings.HasPrefix(held, want) {
			t.Errorf("greedy sandbox: %q, want it to start %q", held, want)
		}
	}
	got := run(t, other, CommandSpec{Argv: []string{"/workspace/probe"}, Env: map[string]string{quotaProbeEnv: "try"}})
	if want := "inotify ok, mqueue ok, keys ok\n"; got != want {
		t.Errorf("while the greedy sandbox holds %q, another sandbox gets %q, want %q", strings.TrimSpace(held), got, want)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Errorf("while the greedy sandbox holds %q, root on the host gets no inotify instance: %v", strings.TrimSpace(held), err)
	} else {
		unix.Close(fd)
	}
}

// TestSandboxesHaveHostIDsOfTheirOwn: each sandbox's root is a host uid of
// its own, which owns its user namespace, while its files are owned on
// disk by the ids every sandbox's are, read and written from both sides.
func TestSandboxesHaveHostIDsOfTheirOwn(t *testing.T) {
	needOwnIDs(t)
	a, b := start(t, true), start(t, true)
	ua, ub := hostRoot(t, a), hostRoot(t, b)
	if ua == ub || ua < hostIDBase+idCount || ub < hostIDBase+idCount {
		t.Errorf("the sandboxes' roots are host uids %d and %d, want two of their own above %d", ua, ub, hostIDBase+idCount)
	}
	for _, s := range []*Sandbox{a, b} {
		if got := run(t, s, CommandSpec{Shell: "id -u; echo made >made; mkdir dir; stat -c '%u %g' made dir"}); got != "0\n0 0\n0 0\n" {
			t.Errorf("inside: %q", got)
		}
		for _, name := range []string{"made", "dir"} {
			fi, err := os.Lstat(filepath.Join(s.FSDir(), "workspace", name))
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != hostIDBase || st.Gid != hostIDBase {
				t.Errorf("%s on the host is owned by %d:%d, want %d:%d", name, st.Uid, st.Gid, hostIDBase, hostIDBase)
			}
		}
	}
	// What one sandbox made, moved into the other on the host (as a
	// snapshot or a copy would), is the other's root's there.
	if err := os.Rename(filepath.Join(a.FSDir(), "workspace", "made"), filepath.Join(b.FSDir(), "workspace", "moved")); err != nil {
		t.Fatal(err)
	}
	if got := run(t, b, CommandSpec{Shell: "stat -c %u moved; echo more >>moved; cat moved"}); got != "0\nmade\nmore\n" {
		t.Errorf("in the other sandbox: %q", got)
	}
}

// hostRoot is the host uid of s's root, checked to own its user namespace.
func hostRoot(t *testing.T, s *Sandbox) uint32 {
	t.Helper()
	pid := s.anchor.Load().initPID
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var uid uint32
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "Uid:" {
			fmt.Sscan(f[2], &uid) // effective
		}
	}
	if owner := hostRootOwner(t, s); owner != uid {
		t.Errorf("sandbox root is host uid %d, its user namespace is owned by %d", uid, owner)
	}
	return uid
}

// TestSandboxWhereIdmapsAreRefused: a sandbox whose directory is on a
// filesystem that cannot be idmapped (ramfs) maps the shared ids, as
// before, and still has a user namespace owner of its own. It shares its
// key quota, and has the seccomp filter that refuses the key syscalls
// (keys_linux.go), as a sandbox with ids of its own has too.
func TestSandboxWhereIdmapsAreRefused(t *testing.T) {
	needOwnIDs(t)
	dir := t.TempDir()
	if err := unix.Mount("osb-test", dir, "ramfs", 0, "mode=0700"); err != nil {
		t.Skip("cannot mount ramfs:", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	s, err := New(Config{ID: randomID(t), Dir: filepath.Join(dir, "sb"), Isolated: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start([]string{"tail", "-f", "/dev/null"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Remove() })
	pid := s.anchor.Load().initPID
	if m, err := os.ReadFile(fmt.Sprintf("/proc/%d/uid_map", pid)); err != nil || strings.Fields(string(m))[1] != fmt.Sprint(hostIDBase) {
		t.Errorf("uid_map %q (%v), want the shared block at %d", m, err, hostIDBase)
	}
	if got := run(t, s, CommandSpec{Shell: "echo made >made; stat -c %u made"}); got != "0\n" {
		t.Errorf("inside: %q", got)
	}
	other := start(t, true)
	if a, b := hostRootOwner(t, s), hostRootOwner(t, other); a == b || a == 0 {
		t.Errorf("user namespaces owned by %d and %d, want an owner of each sandbox's own", a, b)
	}
	for sb, want := range map[*Sandbox]string{s: "2", other: "2"} {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", sb.anchor.Load().initPID))
		if !strings.Contains(string(status), "\nSeccomp:\t"+want+"\n") {
			t.Errorf("init of a sandbox (shared ids: %v): want seccomp mode %s in\n%s", sb == s, want, status)
		}
	}
}

// hostRootOwner is the host uid that owns s's user namespace.
func hostRootOwner(t *testing.T, s *Sandbox) uint32 {
	t.Helper()
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", s.anchor.Load().initPID))
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	owner, err := unix.IoctlGetUint32(int(ns.Fd()), unix.NS_GET_OWNER_UID)
	if err != nil {
		t.Fatal(err)
	}
	return owner
}

// TestRangesAreTakenInTurnAndNeverTwice: a slot whose lock another holder
// has (another server) is skipped, a freed one rests while the others are
// tried, and the cycle starts again at the first free one.
func TestRangesAreTakenInTurnAndNeverTwice(t *testing.T) {
	a := &rangeAllocator{dir: t.TempDir()}
	other, err := os.Create(filepath.Join(a.dir, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	slot := func(r *idRange) int { return (r.owner-hostIDBase)/idCount - 1 }
	first, err := a.take()
	if err != nil {
		t.Fatal(err)
	}
	if slot(first) != 1 || first.mapped != first.owner {
		t.Errorf("first range: slot %d (owner %d, mapped %d), want slot 1, its own ids", slot(first), first.owner, first.mapped)
	}
	first.release()
	second, err := a.take()
	if err != nil {
		t.Fatal(err)
	}
	defer second.release()
	if slot(second) != 2 {
		t.Errorf("after slot 1 was freed the next range is slot %d, want 2", slot(second))
	}
	a.next = rangeCycle - 1
	for _, want := range []int{rangeCycle - 1, 1} {
		r, err := a.take()
		if err != nil {
			t.Fatal(err)
		}
		defer r.release()
		if slot(r) != want {
			t.Errorf("range at slot %d, want %d", slot(r), want)
		}
	}
}

// needOwnIDs skips a test where sandboxes get no host ids of their own.
func needOwnIDs(t *testing.T) {
	t.Helper()
	needIsolation(t)
	if rootless {
		t.Skip("a rootless server's sandboxes all belong to its one user (docs/security.md)")
	}
}
