package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Rootless sockets. A server without root cannot enter a sandbox's network
// namespace (setns needs CAP_SYS_ADMIN in the server's own user namespace
// too), so the sandbox init makes the sockets for it: the server sends
// "dial NETWORK ADDR" or "listen NETWORK ADDR" on a socket pair, the init
// answers with the socket's descriptor (or "error: ..."). A socket belongs
// to the network it was made in, wherever its descriptor goes, so the
// server then uses it as if it had made it there itself.

// dialInsideTimeout bounds a dial in the sandbox: its network is its
// loopback only, so a dial that takes long is going nowhere.
const dialInsideTimeout = 10 * time.Second

// serveSockets is the init's side, for the sandbox's life.
func serveSockets(fd int) {
	buf := make([]byte, 512)
	for {
		n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
		if err != nil || n == 0 {
			return
		}
		f, err := socketHere(strings.Fields(string(buf[:n])))
		if err != nil {
			unix.Sendmsg(fd, []byte("error: "+err.Error()), nil, nil, 0)
			continue
		}
		unix.Sendmsg(fd, []byte("ok"), unix.UnixRights(int(f.Fd())), nil, 0)
		f.Close()
	}
}

// socketHere makes the socket a request asks for, in this network.
func socketHere(req []string) (*os.File, error) {
	if len(req) != 3 {
		return nil, errors.New("bad request")
	}
	op, network, addr := req[0], req[1], req[2]
	switch op {
	case "dial":
		c, err := net.DialTimeout(network, addr, dialInsideTimeout)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		if tc, ok := c.(*net.TCPConn); ok {
			return tc.File()
		}
		return nil, fmt.Errorf("%s: not a TCP network", network)
	case "listen":
		ln, err := net.Listen(network, addr)
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		if tl, ok := ln.(*net.TCPListener); ok {
			return tl.File()
		}
		return nil, fmt.Errorf("%s: not a TCP network", network)
	}
	return nil, fmt.Errorf("unknown request %q", op)
}

// socketPair makes the pair: the server keeps the first end, the init
// gets the second.
func socketPair() (server, init *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "sockets"), os.NewFile(uintptr(fds[1]), "sockets"), nil
}

// socketInside asks the sandbox init for a socket in the sandbox's network.
func (s *Sandbox) socketInside(op, network, addr string) (*os.File, error) {
	s.netMu.RLock()
	defer s.netMu.RUnlock()
	a := s.anchor.Load()
	select {
	case <-s.done:
		return nil, ErrGone
	default:
	}
	if a == nil || a.sockets == nil {
		return nil, errNoNetNS
	}
	a.socketsMu.Lock()
	defer a.socketsMu.Unlock()
	fd := int(a.sockets.Fd())
	if err := unix.Sendmsg(fd, []byte(op+" "+network+" "+addr), nil, nil, 0); err != nil {
		return nil, fmt.Errorf("reaching the sandbox network: %w", err)
	}
	buf, oob := make([]byte, 512), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("reaching the sandbox network: %w", err)
	}
	if n == 0 {
		return nil, ErrGone
	}
	if reply := string(buf[:n]); reply != "ok" {
		return nil, errors.New(strings.TrimPrefix(reply, "error: "))
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("reaching the sandbox network: no socket in the answer")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, errors.New("reaching the sandbox network: no socket in the answer")
	}
	return os.NewFile(uintptr(fds[0]), op+" "+addr), nil
}

// dialViaInit is DialContext for a rootless server.
func (s *Sandbox) dialViaInit(network, addr string) (net.Conn, error) {
	f, err := s.socketInside("dial", network, addr)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return net.FileConn(f)
}

// listenViaInit is ListenInside's listener for a rootless server.
func (s *Sandbox) listenViaInit(addr string) (net.Listener, error) {
	f, err := s.socketInside("listen", "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return net.FileListener(f)
}
