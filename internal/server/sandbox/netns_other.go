//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
)

func (a *anchor) openNetNS() error { return nil }

func (s *Sandbox) closeNamespaces() {}

// DialContext dials on the host: sandboxes have no namespaces here.
func (s *Sandbox) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// ListenInside is not available: sandboxes have no network of their own here.
func (s *Sandbox) ListenInside(string, func(net.Conn)) error {
	return errors.New("sandbox has no network namespace of its own")
}

func socketPair() (server, init *os.File, err error) {
	return nil, nil, errors.New("sandbox namespaces need Linux")
}
