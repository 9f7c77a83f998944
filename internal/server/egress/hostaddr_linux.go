package egress

import (
	"net/netip"
	"syscall"
	"unsafe"
)

// hostAddress reports whether the kernel would deliver a connection to ip
// to this host itself: ip falls in a local, broadcast or anycast route of
// any routing table. Those routes hold every address of every interface
// (the kernel adds them with the address) and also local ranges that no
// interface lists (ip route add local 10.0.0.0/8 dev lo), so this is the
// host's own view of "mine", not a list taken at start.
func hostAddress(ip netip.Addr) (bool, error) {
	family := syscall.AF_INET6
	if ip.Is4() {
		family = syscall.AF_INET
	}
	rib, err := syscall.NetlinkRIB(syscall.RTM_GETROUTE, family)
	if err != nil {
		return false, err
	}
	msgs, err := syscall.ParseNetlinkMessage(rib)
	if err != nil {
		return false, err
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type != syscall.RTM_NEWROUTE || len(m.Data) < syscall.SizeofRtMsg {
			continue
		}
		rt := (*syscall.RtMsg)(unsafe.Pointer(&m.Data[0]))
		switch rt.Type {
		case syscall.RTN_LOCAL, syscall.RTN_BROADCAST, syscall.RTN_ANYCAST:
		default:
			continue
		}
		if routeHolds(m, rt, ip) {
			return true, nil
		}
	}
	return false, nil
}

// routeHolds reports whether the route's destination prefix holds ip. A
// route without a destination is a default route: it holds everything.
func routeHolds(m *syscall.NetlinkMessage, rt *syscall.RtMsg, ip netip.Addr) bool {
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return true // unreadable: count it as the host's, the safe side
	}
	if rt.Dst_len == 0 {
		return true
	}
	for _, a := range attrs {
		if a.Attr.Type != syscall.RTA_DST {
			continue
		}
		dst, ok := netip.AddrFromSlice(a.Value)
		if !ok {
			return false
		}
		prefix, err := dst.Prefix(int(rt.Dst_len))
		return err == nil && prefix.Contains(ip)
	}
	return false
}
