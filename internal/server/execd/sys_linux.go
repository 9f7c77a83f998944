package execd

import (
	"os"
	"syscall"
	"time"
)

// The process and file facts execd needs; sys_other.go says what other
// systems get instead (osb server runs on Linux only).

// kill signals a process, or with a negative pid a process group.
func kill(pid int, sig syscall.Signal) { syscall.Kill(pid, sig) }

// owner is a file's owner, group and inode change time; ok is false when
// the system does not say.
func owner(fi os.FileInfo) (uid, gid uint32, changed time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, time.Time{}, false
	}
	return st.Uid, st.Gid, time.Unix(st.Ctim.Sec, st.Ctim.Nsec), true
}
