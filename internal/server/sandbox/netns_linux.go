package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// An isolated sandbox has a network namespace of its own with only its
// loopback up: nothing routes in or out. The server reaches into it by
// creating sockets there: a goroutine locks its OS thread, enters the
// namespace, makes the socket, and goes back; the socket stays in the
// sandbox's namespace, and the server uses it from anywhere.

// errNoNetNS is returned for sandboxes that share the host's network.
var errNoNetNS = errors.New("sandbox has no network namespace of its own")

// openNetNS keeps the init's network namespace, so that it can be entered
// for as long as the sandbox lives, whatever becomes of pid numbers.
func (a *anchor) openNetNS() error {
	if rootless {
		return nil // reached through the init instead (sockets_linux.go)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", a.initPID))
	if err != nil {
		return err
	}
	a.netns = f
	return nil
}

// inNetNS runs f on an OS thread that is in the sandbox's network
// namespace. f must create its socket in the calling goroutine.
func (s *Sandbox) inNetNS(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		host, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer host.Close()
		if err := s.enterNetNS(); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		errc <- f()
		if unix.Setns(int(host.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		// Otherwise the thread stays locked and ends with this goroutine:
		// no other goroutine may run in the sandbox's namespace.
	}()
	return <-errc
}

// enterNetNS moves the calling thread into the sandbox's network namespace.
func (s *Sandbox) enterNetNS() error {
	s.netMu.RLock()
	defer s.netMu.RUnlock()
	a := s.anchor.Load()
	select {
	case <-s.done:
		return ErrGone
	default:
	}
	if a == nil || a.netns == nil {
		return errNoNetNS
	}
	if err := unix.Setns(int(a.netns.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("entering the sandbox network: %w", err)
	}
	return nil
}

// closeNamespaces lets go of the namespaces held open (Remove).
func (s *Sandbox) closeNamespaces() {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	if a := s.anchor.Load(); a != nil && a.netns != nil {
		a.netns.Close()
		a.netns = nil
	}
	if a := s.anchor.Load(); a != nil && a.pidNSFile != nil {
		a.pidNSFile.Close()
		a.pidNSFile = nil
	}
	if a := s.anchor.Load(); a != nil && a.sockets != nil {
		a.sockets.Close()
		a.sockets = nil
	}
}

// DialContext opens a connection from inside the sandbox's network, so the
// server reaches the sandbox's own ports (127.0.0.1:PORT there). Only
// numeric addresses and "localhost" are accepted: name resolution would
// run on other threads, outside the namespace.
func (s *Sandbox) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if !s.isolated {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	addr, err := numericAddr(addr)
	if err != nil {
		return nil, err
	}
	if rootless {
		return s.dialViaInit(network, addr)
	}
	var conn net.Conn
	err = s.inNetNS(func() error {
		d := net.Dialer{FallbackDelay: -1}
		var err error
		conn, err = d.DialContext(ctx, network, addr)
		return err
	})
	return conn, err
}

// ListenInside listens on addr (e.g. 127.0.0.1:3128) in the sandbox's
// network namespace and hands every connection to serve, in its own
// goroutine, until the sandbox is killed.
func (s *Sandbox) ListenInside(addr string, serve func(net.Conn)) error {
	addr, err := numericAddr(addr)
	if err != nil {
		return err
	}
	var ln net.Listener
	if rootless {
		ln, err = s.listenViaInit(addr)
	} else {
		err = s.inNetNS(func() error {
			var err error
			ln, err = net.Listen("tcp", addr)
			return err
		})
	}
	if err != nil {
		return err
	}
	go func() {
		<-s.done
		ln.Close()
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return nil
}

func numericAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "localhost" || host == "" {
		host = "127.0.0.1"
	}
	if net.ParseIP(host) == nil {
		return "", fmt.Errorf("%s: only numeric addresses can be reached inside a sandbox", addr)
	}
	return net.JoinHostPort(host, port), nil
}
