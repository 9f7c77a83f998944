package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// The init's configuration comes on a socket (fdConfig): first, as soon as
// it starts, the part it can act on before any request (sendEarly); then
// the descriptors the rest names, in messages of one byte (1: more follow) and at
// most maxPassedPerMessage descriptors each, then the JSON initConfig,
// then the end, once the init is in the sandbox's cgroup. The
// configuration names the i-th descriptor sent fdPassed+i, a number no
// descriptor has, which the init replaces by the one it got (usePassed).
// (Moving them to fixed numbers instead would grow the init's descriptor
// table past its first 64, and a process with threads waits out an RCU
// grace period for that.)
const (
	fdPassed            = 1 << 24
	maxPassedPerMessage = 200
)

// sendEarly sends the init, as it starts, what it may build before the
// rest of its configuration: a root of the host's programs, with early's
// binds; nil: nothing (an image's root is built once the rest comes). As
// a 4-byte length and the JSON: read to the byte, so that no read takes a
// message carrying descriptors.
func sendEarly(conf *os.File, early *initConfig) error {
	b, err := json.Marshal(early)
	if err != nil {
		return err
	}
	msg := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	_, err = conf.Write(append(msg, b...))
	return err
}

// readEarly reads what sendEarly sent.
func readEarly() (*initConfig, error) {
	var size [4]byte
	if err := readFull(fdConfig, size[:]); err != nil {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if err := readFull(fdConfig, b); err != nil {
		return nil, fmt.Errorf("reading the configuration: %w", err)
	}
	var early *initConfig
	return early, json.Unmarshal(b, &early)
}

// readFull fills b from descriptor fd.
func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}

// configSocket is a socket pair for an init's configuration: the server's
// end, the init's end.
func configSocket() (server, init *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "config"), os.NewFile(uintptr(fds[1]), "config"), nil
}

// sendConfig sends the init the descriptors files, then cfg.
func sendConfig(conf *os.File, files []*os.File, cfg initConfig) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	for {
		n := min(len(fds), maxPassedPerMessage)
		more := byte(0)
		if n < len(fds) {
			more = 1
		}
		var rights []byte
		if n > 0 {
			rights = unix.UnixRights(fds[:n]...)
		}
		if err := unix.Sendmsg(int(conf.Fd()), []byte{more}, rights, nil, 0); err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
		if fds = fds[n:]; more == 0 {
			break
		}
	}
	return json.NewEncoder(conf).Encode(cfg)
}

// receivePassed takes the descriptors sent ahead of the configuration.
func receivePassed() ([]int, error) {
	var got []int
	oob := make([]byte, unix.CmsgSpace(4*maxPassedPerMessage))
	for more := true; more; {
		var b [1]byte
		n, oobn, _, _, err := unix.Recvmsg(fdConfig, b[:], oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n != 1 {
			return nil, fmt.Errorf("reading the configuration's descriptors: %v", err)
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			fds, err := unix.ParseUnixRights(&m)
			if err != nil {
				return nil, err
			}
			got = append(got, fds...)
		}
		more = b[0] == 1
	}
	return got, nil
}

// usePassed puts the descriptors got in place of the numbers the
// configuration gave them (fdPassed and on). They were received close on
// exec; like the ones the init started with, they are not.
func (cfg *initConfig) usePassed(got []int) error {
	fds := []*int{&cfg.ProcsFD, &cfg.ReserveFD}
	for i := range cfg.Binds {
		fds = append(fds, &cfg.Binds[i].FD)
	}
	if rs := cfg.Rootfs; rs != nil {
		fds = append(fds, &rs.Upper.FD)
		for i := range rs.Layers {
			fds = append(fds, &rs.Layers[i].FD)
		}
	}
	for _, fd := range fds {
		if *fd < fdPassed {
			continue
		}
		i := *fd - fdPassed
		if i >= len(got) {
			return fmt.Errorf("the configuration names descriptor %d of the %d sent", i, len(got))
		}
		*fd = got[i]
	}
	for _, fd := range got {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return err
		}
	}
	return nil
}
