//go:build linux

package egress

import (
	"reflect"
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
