package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The kernel counts inotify instances, POSIX message-queue bytes and
// processes per host uid, charging what a user namespace holds to the
// namespace's owner, and keys per host uid. So each isolated sandbox of a
// server running as root has host ids of its own: a block of idCount ids
// (its "range", one slot of those above the shared block hostIDBase..),
// which its user namespace maps 0..idCount-1 to, and whose first id owns
// that namespace. Its quotas are then its own, as another user's are.
//
// On disk its files keep the shared block's ids: every directory the
// sandbox mounts (its own, the image's layers, volumes) is an idmapped
// mount that shows them as the sandbox's range. Files move between
// sandboxes (images, snapshots, volumes) and are read by the server
// unchanged, whichever range each sandbox had. Where a filesystem cannot
// be idmapped, the sandbox maps the shared block itself, as before, and
// only its namespace's owner is its own (inotify and message queues are
// then its own, keys are not).

// rangeSlots is how many ranges fit above hostIDBase in the 32-bit ids
// (the last id, 2^32-1, means "no id").
const rangeSlots = (1<<32-1-hostIDBase)/idCount - 1

// idRange is the host ids of one sandbox.
type idRange struct {
	owner  int // its first id: owns the sandbox's user namespace
	mapped int // the host id the sandbox's id 0 is: owner, or hostIDBase when not shifted
	lock   *os.File
}

// rangeCycle is how many slots are taken in turn (a freed one rests
// while the others are tried, so what the kernel frees late of a dead
// sandbox is never charged to the next), before the first free one is
// reused: it bounds the lock files, where the slots beyond are only used
// when that many sandboxes run at once.
const rangeCycle = 1024

// rangeAllocator hands out slots. Its dir holds a lock file per slot: a
// slot is taken while some process (this server or another on the host)
// holds its lock, and the kernel drops the lock when that process dies.
type rangeAllocator struct {
	dir  string
	mu   sync.Mutex
	next int // the slot tried first
}

var ranges = &rangeAllocator{dir: "/run/osb-id-ranges"}

// takeRange reserves a free slot for a sandbox.
func takeRange() (*idRange, error) { return ranges.take() }

func (a *rangeAllocator) take() (*idRange, error) {
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return nil, fmt.Errorf("host id ranges: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range rangeSlots {
		slot := (a.next + i) % rangeSlots
		f, err := os.OpenFile(filepath.Join(a.dir, strconv.Itoa(slot)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fmt.Errorf("host id ranges: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				continue
			}
			return nil, fmt.Errorf("host id ranges: %w", err)
		}
		a.next = (slot + 1) % rangeCycle
		owner := hostIDBase + (slot+1)*idCount
		return &idRange{owner: owner, mapped: owner, lock: f}, nil
	}
	return nil, errors.New("host id ranges: every range is taken")
}

// release frees the range once nothing of the sandbox runs.
func (r *idRange) release() {
	if r != nil && r.lock != nil {
		r.lock.Close()
	}
}

// idmapper turns detached mounts of host directories into idmapped ones
// for one sandbox's range. It collects them (own) before the sandbox's
// init is started and maps them all after (apply), while the init waits
// for its configuration: making the namespace they need is a process
// start, which then overlaps with the init's own.
type idmapper struct {
	r       *idRange
	shared  *os.File   // user namespace showing the shared block as the range
	off     bool       // the sandbox's filesystem cannot be idmapped
	pending []*os.File // what own collected
}

// idmappable remembers, per filesystem (device) of a sandbox directory,
// whether it can be idmapped, which the first sandbox there tries.
var idmappable sync.Map // uint64 -> bool

// newIdmapper decides whether r's mounts are idmapped: where the
// filesystem of dir cannot be, r stops being shifted and the idmapper does
// nothing. Before the init starts, as r's mapping is the init's.
func newIdmapper(r *idRange, dir string) (*idmapper, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	if ok, known := idmappable.Load(st.Dev); known {
		if !ok.(bool) {
			r.mapped = hostIDBase
		}
		return &idmapper{r: r, off: !ok.(bool)}, nil
	}
	ns, err := userNamespace(hostIDBase, r.owner)
	if err != nil {
		return nil, err
	}
	m := &idmapper{r: r, shared: ns}
	probe, err := openTree(dir)
	if err != nil {
		m.close()
		return nil, err
	}
	defer probe.Close()
	if err := idmap(probe, ns); errors.Is(err, errNoIdmap) {
		m.close()
		idmappable.Store(st.Dev, false)
		r.mapped = hostIDBase
		return &idmapper{r: r, off: true}, nil
	} else if err != nil {
		m.close()
		return nil, err
	}
	idmappable.Store(st.Dev, true)
	return m, nil
}

// own has apply show the shared block on mnt as the sandbox's range.
func (m *idmapper) own(mnt *os.File) error {
	if m != nil && !m.off {
		m.pending = append(m.pending, mnt)
	}
	return nil
}

// apply idmaps what own collected since it last did. The mounts must
// still be detached: call it before the init has its configuration,
// which names them.
func (m *idmapper) apply() error {
	if m == nil || m.off || len(m.pending) == 0 {
		return nil
	}
	if m.shared == nil {
		ns, err := userNamespace(hostIDBase, m.r.owner)
		if err != nil {
			return err
		}
		m.shared = ns
	}
	for _, mnt := range m.pending {
		if err := idmap(mnt, m.shared); errors.Is(err, errNoIdmap) {
			return fmt.Errorf("%s cannot show the sandbox's ids: %w", mnt.Name(), err)
		} else if err != nil {
			return err
		}
	}
	m.pending = nil
	return nil
}

func (m *idmapper) close() {
	if m != nil && m.shared != nil {
		m.shared.Close()
	}
}

// errNoIdmap is a filesystem (or kernel) that cannot idmap a mount.
var errNoIdmap = errors.New("idmapped mounts unsupported")

// idmap makes the detached mount mnt show its files' owners through the
// user namespace ns.
func idmap(mnt, ns *os.File) error {
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns.Fd())}
	err := unix.MountSetattr(int(mnt.Fd()), "", unix.AT_EMPTY_PATH, attr)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
		return errNoIdmap
	}
	if err != nil {
		return &os.PathError{Op: "mount_setattr", Path: mnt.Name(), Err: err}
	}
	return nil
}

// userNamespace is a new user namespace mapping inside..inside+idCount-1
// to outside..: a child of this program holds it while its descriptor is
// opened, and the descriptor keeps it. The child is killed as soon as the
// descriptor is open: letting it run to its end would cost every create
// a start of the Go runtime (milliseconds), for nothing.
func userNamespace(inside, outside int) (*os.File, error) {
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"osb-sandbox-userns"}
	cmd.Env = []string{initEnv + "=hold"}
	ids := []syscall.SysProcIDMap{{ContainerID: inside, HostID: outside, Size: idCount}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: ids, GidMappings: ids}
	hold, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("user namespace for idmapped mounts: %w", err)
	}
	defer func() {
		cmd.Process.Kill()
		hold.Close()
		go cmd.Wait()
	}()
	return os.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid))
}

// setEUID sets the effective uid of this thread only (the raw system call;
// Go's Setresuid changes every thread), keeping its capabilities: a user
// namespace the thread creates is owned by that uid. The real and saved
// uids stay root's, so it can go back.
func setEUID(uid int) error {
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
		return e
	}
	if uid == 0 {
		return nil // the kernel restores the effective capabilities
	}
	// Leaving euid 0 cleared the effective set; the permitted one stays.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	for i := range data {
		data[i].Effective = data[i].Permitted
	}
	return unix.Capset(&hdr, &data[0])
}
