package execd

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
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

// growPipe asks for a pipe of pipeSize bytes (the kernel's default is 64
// KiB), and reports whether it got one.
func growPipe(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	got := 0
	rc.Control(func(fd uintptr) {
		got, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
	})
	return got >= pipeSize
}
