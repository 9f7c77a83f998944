package egress

import (
	"fmt"
	"net/netip"
)

// refusedAddress is why the proxy will not connect to an address: it
// belongs to this host (or its links), which sandboxes must not reach,
// whatever the policy and whatever name led there.
type refusedAddress struct {
	ip  netip.Addr
	why string
}

func (e *refusedAddress) Error() string {
	return fmt.Sprintf("%s is %s, which the egress proxy does not reach", e.ip, e.why)
}

// checkDestination refuses ip when a connection to it would end on this
// host or its links: loopback, unspecified, link-local and multicast
// addresses, and every address the host itself has (hostAddress), read at
// each call so that addresses added after start count too. An
// IPv4-mapped IPv6 address is checked as the IPv4 address it is.
func checkDestination(ip netip.Addr) error {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return &refusedAddress{ip, "not an address"}
	case ip.IsLoopback(), ip.IsUnspecified():
		return &refusedAddress{ip, "an address of this host"}
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast(), ip.IsMulticast():
		return &refusedAddress{ip, "a link-local or multicast address"}
	}
	local, err := hostAddress(ip)
	if err != nil {
		// Not knowing the host's addresses, the proxy cannot tell: refuse.
		return &refusedAddress{ip, "possibly an address of this host (" + err.Error() + ")"}
	}
	if local {
		return &refusedAddress{ip, "an address of this host"}
	}
	return nil
}
