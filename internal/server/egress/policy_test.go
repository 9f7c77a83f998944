//go:build linux

package egress

import (
	"reflect"
	"strings"
	"testing"
)

func rules(pairs ...string) []Rule {
	out := []Rule{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Rule{Action: pairs[i], Target: pairs[i+1]})
	}
	return out
}

func TestMergeGivesIncomingRulesPriority(t *testing.T) {
	base := Policy{DefaultAction: Deny, Egress: rules(Allow, "a.com", Deny, "b.com", Allow, "c.com")}
	got := base.Merge(rules(Deny, "C.com", Allow, "d.com", Allow, "c.com"))
	want := Policy{DefaultAction: Deny, Egress: rules(Deny, "C.com", Allow, "d.com", Allow, "a.com", Deny, "b.com")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge:\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(base.Egress, rules(Allow, "a.com", Deny, "b.com", Allow, "c.com")) {
		t.Errorf("Merge changed its receiver: %+v", base)
	}
}

func TestMergeInPlaceKeepsPositions(t *testing.T) {
	base := Policy{DefaultAction: Allow, Egress: rules(Allow, "a.com", Deny, "b.com")}
	got := base.MergeInPlace(rules(Allow, "b.com", Deny, "new.com", Deny, "b.com"))
	want := Policy{DefaultAction: Allow, Egress: rules(Allow, "a.com", Allow, "b.com", Deny, "new.com")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MergeInPlace:\n got %+v\nwant %+v", got, want)
	}
}

func TestWithoutIgnoresUnknownTargets(t *testing.T) {
	base := Policy{DefaultAction: Deny, Egress: rules(Allow, "a.com", Deny, "*.b.com")}
	got, n := base.Without([]string{"*.B.com", "nope.com", " "})
	if n != 1 || !reflect.DeepEqual(got, Policy{DefaultAction: Deny, Egress: rules(Allow, "a.com")}) {
		t.Errorf("Without: %d %+v", n, got)
	}
	if _, n := got.Without([]string{"nope.com"}); n != 0 {
		t.Errorf("removed %d unknown", n)
	}
}

func TestModeAndDecide(t *testing.T) {
	p := Policy{DefaultAction: Deny, Egress: rules(Deny, "bad.example.com", Allow, "*.example.com")}
	for host, want := range map[string]string{
		"api.example.com": Allow, "bad.example.com": Deny, "example.com": Deny, "A.Example.COM.": Allow, "other.org": Deny,
	} {
		if got := p.Decide(host); got != want {
			t.Errorf("Decide(%q) = %s, want %s", host, got, want)
		}
	}
	for _, c := range []struct {
		p    Policy
		mode string
	}{{AllowAll(), "allow_all"}, {DenyAll(), "deny_all"}, {p, "enforcing"}} {
		if got := c.p.Mode(); got != c.mode {
			t.Errorf("Mode(%+v) = %s, want %s", c.p, got, c.mode)
		}
	}
}

func TestNormalize(t *testing.T) {
	got, err := Policy{Egress: rules(" ALLOW ", " pypi.org ")}.Normalize()
	if err != nil || !reflect.DeepEqual(got, Policy{DefaultAction: Deny, Egress: rules(Allow, "pypi.org")}) {
		t.Errorf("Normalize: %+v %v", got, err)
	}
	for _, bad := range []Policy{
		{DefaultAction: "block"},
		{Egress: rules("maybe", "a.com")},
		{Egress: rules(Allow, "  ")},
		{Egress: rules(Allow, "https://a.com")},
		{Egress: rules(Allow, "a.*.com")},
	} {
		if _, err := bad.Normalize(); err == nil {
			t.Errorf("Normalize(%+v) accepted", bad)
		}
	}
}

// TestAddressRulesMatchEveryForm: a rule for an address or a block matches
// a destination however the address is written, and a deny cannot be
// stepped around with another spelling of the same address.
func TestAddressRulesMatchEveryForm(t *testing.T) {
	p, err := Policy{DefaultAction: Allow, Egress: rules(
		Deny, "10.1.2.3",
		Deny, "::ffff:192.168.0.0/112", // the IPv4 block 192.168.0.0/16
		Deny, "172.16.5.9/12",
		Deny, "fd00::/8",
		Deny, "2001:DB8::0:1",
	)}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, r := range p.Egress {
		stored = append(stored, r.Target)
	}
	if want := "10.1.2.3 192.168.0.0/16 172.16.0.0/12 fd00::/8 2001:db8::1"; strings.Join(stored, " ") != want {
		t.Errorf("stored targets %q, want %q", strings.Join(stored, " "), want)
	}
	for _, c := range []struct{ host, want string }{
		{"10.1.2.3", Deny},
		{"::ffff:10.1.2.3", Deny},
		{"[::ffff:10.1.2.3]", Deny},
		{"::ffff:a01:203", Deny},
		{"0:0:0:0:0:ffff:10.1.2.3", Deny},
		{"010.1.2.3", Allow}, // octal 010 is 8: 8.1.2.3, as curl and inet_aton read it
		{"012.001.002.003", Deny},
		{"0x0a.1.2.3", Deny},
		{"0xa010203", Deny},
		{"167838211", Deny}, // 10.1.2.3 as one decimal number
		{"10.1.515", Deny},  // 10.1.(2*256+3)
		{"10.66051", Deny},  // 10.(1*65536+2*256+3)
		{"10.1.2.3.", Deny},
		{"10.1.2.4", Allow},
		{"192.168.200.7", Deny},
		{"::ffff:192.168.200.7", Deny},
		{"3232286727", Deny}, // 192.168.200.7
		{"192.169.0.1", Allow},
		{"172.31.255.255", Deny},
		{"172.32.0.0", Allow},
		{"fd12:3456::1", Deny},
		{"[FD12:3456::1]", Deny},
		{"fe80::1", Allow},
		{"2001:db8:0:0:0:0:0:1", Deny},
		{"2001:0db8::0001", Deny},
		{"10.1.2.3.example.test", Allow}, // a name, not an address
		{"1.2.3.4.5", Allow},
		{"4294967296", Allow}, // too big for IPv4: a name
	} {
		if got := p.Decide(c.host); got != c.want {
			t.Errorf("Decide(%q) = %s, want %s (read as %q)", c.host, got, c.want, canonicalHost(c.host))
		}
	}
}

// TestAddressTargetsRefusedAtPatchTime: a block that cannot match is an
// error when the rule is given, not a rule reported as enforced.
func TestAddressTargetsRefusedAtPatchTime(t *testing.T) {
	for target, msg := range map[string]string{
		"10.0.0.0/33":       "a CIDR block is an address, a slash and a prefix length that fits it",
		"10.0.0.0/":         "a CIDR block is",
		"10.0.0.0/x":        "a CIDR block is",
		"10.0.0.0/-1":       "a CIDR block is",
		"::ffff:1.0.0.0/95": "a CIDR block is",
		"fd00::/129":        "a CIDR block is",
		"example.com/8":     "without port or path",
		"example.com:443":   "without port or path",
		"[example.com]":     "without port or path",
	} {
		_, err := Policy{Egress: rules(Deny, target)}.Normalize()
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), `egress[0]: invalid egress target "`+target+`"`) {
			t.Errorf("%q: %v", target, err)
		}
	}
	// A delete names the target however it is written.
	p, _ := Policy{DefaultAction: Deny, Egress: rules(Deny, "10.1.2.3")}.Normalize()
	if _, n := p.Without([]string{"::ffff:10.1.2.3"}); n != 1 {
		t.Errorf("delete by another spelling removed %d rules", n)
	}
	if got := p.Merge(rules(Allow, "167838211")); len(got.Egress) != 1 {
		t.Errorf("a patch by another spelling added a rule: %+v", got)
	}
}
