package sandbox

import "syscall"

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
