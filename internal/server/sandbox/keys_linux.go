package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The init refuses the key syscalls to itself and every process it starts,
// with EPERM, as the default seccomp profile of Docker (the real server's
// runtime) refuses them in every container: a program that works in an
// osb sandbox works in a real one. It also keeps the kernel's key quota
// (kernel.keys.maxkeys, maxbytes, per host uid) out of reach where
// sandboxes share a uid (rootless, or as root where a sandbox's directory
// cannot be idmapped).

// keyCalls are the numbers of add_key, request_key and keyctl for an
// audit architecture.
type keyCalls struct {
	arch uint32
	nrs  []uint32
}

// keySyscalls are, for this build's machine, each architecture a process
// on it can enter the kernel as: 64-bit, and the 32-bit compatibility
// ABIs (x32 numbers carry bit 30).
var keySyscalls = map[string][]keyCalls{
	"amd64": {
		{unix.AUDIT_ARCH_X86_64, []uint32{248, 249, 250, 1<<30 | 248, 1<<30 | 249, 1<<30 | 250}},
		{unix.AUDIT_ARCH_I386, []uint32{286, 287, 288}},
	},
	"arm64": {
		{unix.AUDIT_ARCH_AARCH64, []uint32{217, 218, 219}},
		{unix.AUDIT_ARCH_ARM, []uint32{309, 310, 311}},
	},
}

// Offsets in struct seccomp_data.
const (
	seccompNr   = 0
	seccompArch = 4
)

// keysFilter is a seccomp program that fails the key syscalls with EPERM
// and allows everything else; nil where keySyscalls does not know the
// machine.
func keysFilter(calls []keyCalls) []unix.SockFilter {
	if len(calls) == 0 {
		return nil
	}
	load := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }
	eq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	allow, refuse := ret(unix.SECCOMP_RET_ALLOW), ret(unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	var prog []unix.SockFilter
	for _, c := range calls {
		// Another architecture: past this block (its load of the number,
		// a test and a refusal per syscall, and its allow).
		prog = append(prog, load(seccompArch), eq(c.arch, 0, uint8(2*len(c.nrs)+2)), load(seccompNr))
		for _, nr := range c.nrs {
			prog = append(prog, eq(nr, 0, 1), refuse)
		}
		prog = append(prog, allow)
	}
	return append(prog, allow)
}

// refuseKeys installs keysFilter on every thread of the init; what it
// starts from then on inherits it and cannot remove it.
func refuseKeys() error {
	prog := keysFilter(keySyscalls[runtime.GOARCH])
	if prog == nil {
		return nil
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp filter for the key syscalls: %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp filter for the key syscalls: thread %d could not take it", r)
	}
	return nil
}
