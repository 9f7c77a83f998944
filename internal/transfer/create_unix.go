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
func createFile(name string) (*os.File, error) {
	for {
		fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o666)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}
