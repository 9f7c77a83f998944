package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// The process control sandboxes need; sys_other.go says what other
// systems get instead (osb server runs on Linux only).

const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)

// groupAttr starts a process in a group of its own; dieWithServer also
// kills it when the server dies.
func groupAttr(dieWithServer bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if dieWithServer {
		attr.Pdeathsig = syscall.SIGKILL
	}
	return attr
}

// runAs makes the process run as uid and gid.
func runAs(attr *syscall.SysProcAttr, uid, gid uint32) {
	attr.Credential = &syscall.Credential{Uid: uid, Gid: gid}
}

// kill signals a process, or with a negative pid a process group.
func kill(pid int, sig syscall.Signal) { syscall.Kill(pid, sig) }

// startSteady starts cmd from an OS thread that never ends. Pdeathsig is
// sent when the thread that forked the child ends, not the process, and a
// Go thread ends when a goroutine exits while locked to it (as one that
// entered a sandbox's network and could not leave does): a sandbox started
// from such a thread would be killed with it, the server still running.
func startSteady(cmd *exec.Cmd) error { return startSteadyAs(cmd, 0) }

// startSteadyAs is startSteady with the thread's effective uid set to
// owner (unless 0) while it starts cmd: the owner of the user namespace
// cmd gets (see idrange_linux.go).
func startSteadyAs(cmd *exec.Cmd, owner int) error {
	spawnerOnce.Do(func() { go spawner() })
	done := make(chan error, 1)
	spawns <- spawnRequest{cmd, owner, done}
	return <-done
}

type spawnRequest struct {
	cmd   *exec.Cmd
	owner int
	done  chan error
}

var (
	spawnerOnce sync.Once
	spawns      = make(chan spawnRequest)
)

func spawner() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the server
	for r := range spawns {
		r.done <- r.start()
	}
}

func (r spawnRequest) start() error {
	if r.owner == 0 {
		return r.cmd.Start()
	}
	if err := setEUID(r.owner); err != nil {
		setEUID(0)
		return fmt.Errorf("taking the sandbox's uid: %w", err)
	}
	err := r.cmd.Start()
	if rerr := setEUID(0); rerr != nil {
		// Every later sandbox would start with the wrong owner.
		panic(fmt.Sprintf("sandbox spawner cannot become root again: %v", rerr))
	}
	return err
}

// ownNoFile is the server's own hard RLIMIT_NOFILE.
func ownNoFile() uint64 {
	var l syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Max
}
