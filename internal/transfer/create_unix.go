//go:build unix

package transfer

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// createFile creates (or truncates) a file for writing, as os.Create does,
// without what os.Create adds in case the runtime poller could serve the
// file (a regular file it never can): four fcntl and an epoll_ctl for each
// file, which a tree of small files feels.
func createFile(name string) (*os.File, error) { return create(name, unix.O_TRUNC) }

// createNew is createFile for a file that must not exist yet.
func createNew(name string) (*os.File, error) { return create(name, unix.O_EXCL) }

func create(name string, flag int) (*os.File, error) {
	for {
		fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC|flag, 0o666)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// rename is os.Rename without its look at newname first.
func rename(oldname, newname string) error {
	if err := unix.Rename(oldname, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
}
