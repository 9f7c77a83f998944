package egress

import (
	"net/netip"
	"strconv"
	"strings"
)

// canonicalHost is the one spelling of a destination host that the policy
// matches and the proxy dials: an address in any form a client may send
// (IPv4-mapped IPv6, [brackets], the numeric forms of inet_aton such as
// 2130706433, 0x7f.1 or 010.0.0.1) becomes its usual text, 1.2.3.4 or
// 2001:db8::1; a name is lower case without its final dot.
func canonicalHost(host string) string {
	if ip, ok := parseAddress(host); ok {
		return ip.String()
	}
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// parseAddress reads host as an IP address in any of the forms above.
func parseAddress(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().WithZone(""), true
	}
	return parseLegacyIPv4(strings.TrimSuffix(host, "."))
}

// parseLegacyIPv4 reads the IPv4 forms that inet_aton (and so curl, glibc
// and browsers) accept: one to four parts, each decimal, octal (a leading
// 0) or hexadecimal (0x), the last part filling the bytes that are left.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	var v uint64
	for _, n := range nums[:len(nums)-1] {
		if n > 0xff {
			return netip.Addr{}, false
		}
		v = v<<8 | n
	}
	last := nums[len(nums)-1]
	rest := uint(8 * (5 - len(nums)))
	if last >= 1<<rest {
		return netip.Addr{}, false
	}
	v = v<<rest | last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}

// targetPrefix reads a rule target that names addresses: one address in
// any form (a prefix of its full length) or a CIDR block. A block given
// as IPv4-mapped IPv6 (::ffff:10.0.0.0/104) is the IPv4 block it is.
func targetPrefix(t string) (netip.Prefix, bool, error) {
	addr, bits, isCIDR := strings.Cut(t, "/")
	ip, ok := parseAddress(addr)
	if !ok {
		return netip.Prefix{}, false, nil
	}
	if !isCIDR {
		return netip.PrefixFrom(ip, ip.BitLen()), true, nil
	}
	n, err := strconv.Atoi(bits)
	if err != nil || bits != strconv.Itoa(n) {
		return netip.Prefix{}, true, errBadCIDR
	}
	if raw, _ := netip.ParseAddr(strings.Trim(addr, "[]")); raw.Is4In6() {
		n -= 96
	}
	p, err := ip.Prefix(n)
	if err != nil || n < 0 {
		return netip.Prefix{}, true, errBadCIDR
	}
	return p, true, nil
}
