package egress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Rule actions.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Rule is one egress rule: allow or deny a domain (example.com), every
// subdomain of one (*.example.com), an IP address or a CIDR block. An
// address or block matches destinations given as addresses, whatever their
// spelling (canonicalHost); a name is matched as a name.
type Rule struct {
	Action string `json:"action"`
	Target string `json:"target"`
}

// Policy is a NetworkPolicy: the rules are tried in order, the first whose
// target matches decides, and DefaultAction decides the rest.
type Policy struct {
	DefaultAction string `json:"defaultAction"`
	Egress        []Rule `json:"egress"`
}

// AllowAll is the policy of a sandbox created without one (or with an
// empty one): the egress API then starts permissive, as the spec says.
func AllowAll() Policy { return Policy{DefaultAction: Allow, Egress: []Rule{}} }

// DenyAll is what replacing the policy with an empty body resets it to.
func DenyAll() Policy { return Policy{DefaultAction: Deny, Egress: []Rule{}} }

// Mode is the sidecar's derived mode: allow_all, deny_all, or enforcing
// when there are rules. It describes the policy, not what is enforced.
func (p Policy) Mode() string {
	switch {
	case len(p.Egress) > 0:
		return "enforcing"
	case p.DefaultAction == Allow:
		return "allow_all"
	default:
		return "deny_all"
	}
}

// Normalize checks a policy and puts it in canonical form: actions lower
// case, targets trimmed, a missing defaultAction meaning deny.
func (p Policy) Normalize() (Policy, error) {
	out := Policy{DefaultAction: strings.ToLower(strings.TrimSpace(p.DefaultAction)), Egress: []Rule{}}
	switch out.DefaultAction {
	case "":
		out.DefaultAction = Deny
	case Allow, Deny:
	default:
		return Policy{}, fmt.Errorf("unsupported defaultAction %q (use allow or deny)", p.DefaultAction)
	}
	rules, err := NormalizeRules(p.Egress)
	if err != nil {
		return Policy{}, err
	}
	out.Egress = rules
	return out, nil
}

// NormalizeRules checks rules and puts them in canonical form.
func NormalizeRules(rules []Rule) ([]Rule, error) {
	out := make([]Rule, 0, len(rules))
	for i, r := range rules {
		n, err := r.normalize()
		if err != nil {
			return nil, fmt.Errorf("egress[%d]: %w", i, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func (r Rule) normalize() (Rule, error) {
	n := Rule{Action: strings.ToLower(strings.TrimSpace(r.Action)), Target: strings.TrimSpace(r.Target)}
	if n.Action != Allow && n.Action != Deny {
		return Rule{}, fmt.Errorf("unsupported action %q (use allow or deny)", r.Action)
	}
	if err := checkTarget(n.Target); err != nil {
		return Rule{}, err
	}
	t, err := canonicalTarget(n.Target)
	if err != nil {
		return Rule{}, fmt.Errorf("invalid egress target %q: %w", r.Target, err)
	}
	n.Target = t
	return n, nil
}

// canonicalTarget is the one spelling of a rule target: an address as
// canonicalHost writes it, a CIDR block with its host bits cleared, a
// domain as it was given. A target that is neither an
// address nor a block must be a name: no port, path or brackets. A name
// keeps the spelling it was given (policy answers show it so); targetKey
// compares names case-insensitively.
func canonicalTarget(t string) (string, error) {
	prefix, isAddr, err := targetPrefix(t)
	switch {
	case err != nil:
		return "", err
	case isAddr && prefix.IsSingleIP():
		return prefix.Addr().String(), nil
	case isAddr:
		return prefix.Masked().String(), nil
	case strings.ContainsAny(t, "/:[]"):
		return "", errors.New("a target is a domain, an IP address or a CIDR block, without port or path")
	}
	return t, nil
}

var errBadCIDR = errors.New("a CIDR block is an address, a slash and a prefix length that fits it (10.0.0.0/8, fd00::/8)")

// checkTarget accepts what a rule may name: a domain, a leftmost wildcard
// domain, an IP address or a CIDR block. Anything with a scheme, a path or
// spaces is a mistake worth reporting.
func checkTarget(t string) error {
	switch {
	case t == "":
		return errors.New("egress target cannot be empty")
	case strings.ContainsAny(t, " \t\r\n"), strings.Contains(t, "://"):
		return fmt.Errorf("invalid egress target %q: use a domain such as example.com or *.example.com", t)
	case strings.Contains(t, "*") && (!strings.HasPrefix(t, "*.") || strings.Contains(t[2:], "*")):
		return fmt.Errorf("invalid egress target %q: a wildcard must be the whole leftmost label (*.example.com)", t)
	}
	return nil
}

// targetKey compares targets in their canonical spelling: domains are
// case-insensitive, an address is the same however it is written.
func targetKey(t string) string {
	t = strings.TrimSpace(t)
	if c, err := canonicalTarget(t); err == nil {
		t = c
	}
	return canonicalHost(t)
}

// Merge applies a sidecar PATCH: the incoming rules come first (they take
// priority), the first incoming rule for a target wins, existing rules for
// other targets follow in their order, and the default action is kept.
func (p Policy) Merge(incoming []Rule) Policy {
	out := Policy{DefaultAction: p.DefaultAction, Egress: make([]Rule, 0, len(p.Egress)+len(incoming))}
	seen := map[string]bool{}
	for _, r := range append(append([]Rule{}, incoming...), p.Egress...) {
		if k := targetKey(r.Target); !seen[k] {
			seen[k] = true
			out.Egress = append(out.Egress, r)
		}
	}
	return out
}

// MergeInPlace applies a PATCH of the lifecycle server's stored intent (the
// networkpolicy route of template sandboxes): an incoming rule replaces the
// existing rule for its target where it stands, new targets are appended,
// the first incoming rule for a target wins, the default action is kept.
func (p Policy) MergeInPlace(incoming []Rule) Policy {
	byTarget := map[string]Rule{}
	var order []string
	for _, r := range incoming {
		k := targetKey(r.Target)
		if _, dup := byTarget[k]; !dup {
			byTarget[k] = r
			order = append(order, k)
		}
	}
	out := Policy{DefaultAction: p.DefaultAction, Egress: make([]Rule, 0, len(p.Egress)+len(incoming))}
	for _, r := range p.Egress {
		k := targetKey(r.Target)
		if n, ok := byTarget[k]; ok {
			r = n
			delete(byTarget, k)
		}
		out.Egress = append(out.Egress, r)
	}
	for _, k := range order {
		if r, ok := byTarget[k]; ok {
			out.Egress = append(out.Egress, r)
		}
	}
	return out
}

// Without removes the rules for targets (case-insensitive; unknown targets
// are ignored) and reports how many went.
func (p Policy) Without(targets []string) (Policy, int) {
	drop := map[string]bool{}
	for _, t := range targets {
		if k := targetKey(t); k != "" {
			drop[k] = true
		}
	}
	out := Policy{DefaultAction: p.DefaultAction, Egress: make([]Rule, 0, len(p.Egress))}
	for _, r := range p.Egress {
		if !drop[targetKey(r.Target)] {
			out.Egress = append(out.Egress, r)
		}
	}
	return out, len(p.Egress) - len(out.Egress)
}

// Decide returns what the policy does with a connection to host: the action
// of the first rule whose target matches, else the default action.
func (p Policy) Decide(host string) string {
	host = canonicalHost(host)
	ip, isAddr := parseAddress(host)
	for _, r := range p.Egress {
		if prefix, ok, err := targetPrefix(r.Target); ok || err != nil {
			if isAddr && err == nil && prefix.Contains(ip) {
				return r.Action
			}
			continue
		}
		if hostMatches(host, targetKey(r.Target)) {
			return r.Action
		}
	}
	return p.DefaultAction
}

// hostMatches: *.example.com matches a.example.com and a.b.example.com,
// not example.com itself; other targets match exactly.
func hostMatches(host, target string) bool {
	if suffix, ok := strings.CutPrefix(target, "*"); ok && strings.HasPrefix(suffix, ".") {
		return strings.HasSuffix(host, suffix) && host != suffix[1:]
	}
	return host == target
}

// decodeStrict decodes one JSON value and rejects unknown fields, as the
// spec's additionalProperties: false asks. Syntax errors are reported by
// offset only: their usual text quotes the offending byte, which may belong
// to a secret.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

func jsonProblem(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("malformed JSON at byte %d", syn.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("malformed JSON: unexpected end of input")
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := typ.Field
		if field == "" {
			field = "body"
		}
		return fmt.Errorf("%s: expected %s, got %s", field, jsonKind(typ.Type), typ.Value)
	}
	return err
}

// jsonKind names a Go type the way a JSON document would.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}
