package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A sandbox's user namespace maps its uids and gids 0..idCount-1 to a
// block of host ids no host user has, so root in a sandbox is nobody on
// the host: as root, a block of its own above hostIDBase (see
// idrange_linux.go); the shared block hostIDBase.. is what their files are
// owned by on disk.
const (
	hostIDBase = 1 << 30
	idCount    = 65536
)

// Rootless (a server without root), the namespace maps only uid and gid 0,
// to the server's own: the one mapping an unprivileged process may write
// (no newuidmap helper), with setgroups denied as the kernel then requires.
// Root in the sandbox is then the server's user on the host.
// ids nil (the probe) maps the shared block.
func initAttr(ids *idRange) *syscall.SysProcAttr {
	base := hostIDBase
	if ids != nil {
		base = ids.mapped
	}
	uids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: base, Size: idCount}}
	gids := uids
	if rootless {
		uids = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		gids = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	return &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET,
		UidMappings:                uids,
		GidMappings:                gids,
		GidMappingsEnableSetgroups: !rootless,
		// Become root of the new namespace: without this the init would keep
		// the server's host uid.
		Credential: &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: rootless},
		Pdeathsig:  syscall.SIGKILL,
		Setpgid:    true,
	}
}

func probe() Isolation {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{"osb-sandbox-probe"}
	cmd.Env = []string{initEnv + "=probe"}
	cmd.SysProcAttr = initAttr(nil)
	if out, err := cmd.CombinedOutput(); err != nil && rootless {
		return Isolation{Reason: strings.TrimSpace(fmt.Sprintf("osb server is not running as root and this kernel refuses it unprivileged user namespaces: %v %s", err, out))}
	} else if err != nil {
		return Isolation{Reason: strings.TrimSpace(fmt.Sprintf("cannot create namespaces: %v %s", err, out))}
	}
	return Isolation{Available: true}
}

// openOwnedDir creates dir if needed, hands it to the sandboxes' root on
// disk (the shared block, which the caller's idmapped mount shows as the
// sandbox's own) and returns a detached mount of it (open_tree): the init
// attaches it in its own tree, as it can neither walk the server's
// private directories nor bind-mount from the host's mount namespace.
func openOwnedDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Lchown(dir, hostIDBase, hostIDBase); err != nil {
		return nil, err
	}
	return openTree(dir)
}

// openTree returns a detached mount of dir, for the init to attach.
func openTree(dir string) (*os.File, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open_tree", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// listenAgent makes the unix socket the in-sandbox agent serves on: in the
// sandbox directory, which the sandbox cannot see, so only the server
// reaches it. Returns the listening socket for the init to pass on.
func (s *Sandbox) listenAgent() (*os.File, error) {
	if s.dirFile == nil {
		fd, err := unix.Open(s.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: s.dir, Err: err}
		}
		s.dirFile = os.NewFile(uintptr(fd), s.dir)
	}
	os.Remove(filepath.Join(s.dir, agentSocket))
	ln, err := net.Listen("unix", s.AgentSocket())
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	defer ul.Close()
	return ul.File()
}

// AgentSocket is the path to dial for the in-sandbox agent (execd); "" when
// the sandbox has none. The path goes through a descriptor of the sandbox
// directory, so it stays short whatever the data directory.
func (s *Sandbox) AgentSocket() string {
	if !s.agent || s.dirFile == nil {
		return ""
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", s.dirFile.Fd(), agentSocket)
}
