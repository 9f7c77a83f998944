package server

import (
	"io/fs"
	"os"
	"syscall"
)

// The file facts the server needs; sys_other.go says what other systems
// get instead (osb server runs on Linux only).

// tryLock takes an exclusive lock on f without waiting; busy reports that
// another holds it.
func tryLock(f *os.File) (busy bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return err == syscall.EWOULDBLOCK, err
}

// unlock releases f's lock and closes f. The lock goes with every copy of
// the descriptor, which closing alone would not release: a process forking
// elsewhere in this program holds a copy until it execs.
func unlock(f *os.File) error {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return f.Close()
}

// ownerIDs is a file's owner and group; ok is false when the system does
// not say.
func ownerIDs(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
