//go:build !linux

package egress

import (
	"net"
	"net/netip"
)

// hostAddress reports whether ip is an address of one of this host's
// interfaces (elsewhere than Linux, local routes are not looked at).
func hostAddress(ip netip.Addr) (bool, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if own, ok := netip.AddrFromSlice(n.IP); ok && own.Unmap() == ip {
				return true, nil
			}
		}
	}
	return false, nil
}
