package execd

import (
	"os"
	"syscall"
	"unsafe"
)

// pipeBuffered is how many bytes wait in pipe f to be read.
func pipeBuffered(f *os.File) int64 {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	var n int32
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	})
	return int64(n)
}
