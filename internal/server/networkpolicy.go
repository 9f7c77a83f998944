package server

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"slices"

	"github.com/osb-dev/osb/internal/server/egress"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// Egress: the sidecar every sandbox gets on EgressPort, its seeding from the
// create request, and the lifecycle server's /sandboxes/{id}/networkpolicy
// routes. Nothing here filters traffic; see package egress.

// originTemplate marks sandboxes created from a template. Like the real
// server's template sandboxes they have no egress sidecar: their policy is
// intent kept by the lifecycle server, reached through networkpolicy.
const originTemplate = "template"

// originHeader tells clients on endpoint responses where a sandbox came from.
const originHeader = "OPEN-SANDBOX-ORIGIN"

// withEgressSidecar returns the port handlers with the local egress sidecar
// on EgressPort, unless the caller set that port itself (a nil handler
// there means no sidecar at all).
func (s *Server) withEgressSidecar(hs map[int]PortHandler) map[int]PortHandler {
	out := maps.Clone(hs)
	if out == nil {
		out = map[int]PortHandler{}
	}
	h, set := out[EgressPort]
	switch {
	case !set:
		out[EgressPort] = func(sb *sandbox.Sandbox) http.Handler {
			return egress.New(sb, egress.Options{Log: s.log.event})
		}
	case h == nil:
		delete(out, EgressPort)
	}
	return out
}

// egressSeed is what a create request says about egress.
type egressSeed struct {
	policy          *egress.Policy // nil: no networkPolicy, or an empty one
	given           bool           // networkPolicy present and not null
	credentialProxy bool
	problem         string // a 400 message, found after the shape checks
}

// egressSeed reads networkPolicy and credentialProxy: shape errors as
// details, the rest (blank targets, proxy without policy) as problem.
func (v *fields) egressSeed(body map[string]any) egressSeed {
	var seed egressSeed
	if x := body["networkPolicy"]; x != nil {
		seed.given = true
		before := len(v.details)
		p, empty := v.networkPolicy(x, []any{"body", "networkPolicy"})
		if len(v.details) == before && !empty {
			n, err := p.Normalize()
			if err != nil {
				seed.problem = "Invalid networkPolicy: " + err.Error()
			}
			seed.policy = &n
		}
	}
	seed.credentialProxy = v.credentialProxy(body["credentialProxy"])
	if seed.credentialProxy && !seed.given && seed.problem == "" {
		seed.problem = "credentialProxy.enabled requires a networkPolicy: Credential Vault injection needs an egress policy."
	}
	return seed
}

func (v *fields) credentialProxy(x any) bool {
	if x == nil {
		return false
	}
	loc := []any{"body", "credentialProxy"}
	m, ok := v.strictObject(x, loc, "enabled")
	if !ok {
		return false
	}
	switch e := m["enabled"].(type) {
	case nil:
		return false
	case bool:
		return e
	default:
		v.add(typeErr(locAt(loc, "enabled"), "bool_type", "Input should be a valid boolean", e))
		return false
	}
}

// strictObject checks that x is an object with no keys but allowed.
func (v *fields) strictObject(x any, loc []any, allowed ...string) (map[string]any, bool) {
	m, ok := x.(map[string]any)
	if !ok {
		v.add(typeErr(loc, "model_attributes_type", "Input should be a valid dictionary or object to extract fields from", x))
		return nil, false
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			v.add(typeErr(locAt(loc, k), "extra_forbidden", "Extra inputs are not permitted", m[k]))
		}
	}
	return m, true
}

// locAt extends a location without sharing the caller's backing array.
func locAt(loc []any, more ...any) []any { return append(slices.Clip(loc), more...) }

// networkPolicy reads a NetworkPolicy object; empty reports {} (no keys).
func (v *fields) networkPolicy(x any, loc []any) (p egress.Policy, empty bool) {
	m, ok := v.strictObject(x, loc, "defaultAction", "egress")
	if !ok {
		return p, false
	}
	if d := m["defaultAction"]; d != nil {
		p.DefaultAction = v.ruleAction(d, locAt(loc, "defaultAction"))
	}
	if rules := m["egress"]; rules != nil {
		p.Egress = v.egressRules(rules, locAt(loc, "egress"))
	}
	return p, len(m) == 0
}

func (v *fields) egressRules(x any, loc []any) []egress.Rule {
	list, ok := x.([]any)
	if !ok {
		v.add(typeErr(loc, "list_type", "Input should be a valid list", x))
		return nil
	}
	out := make([]egress.Rule, 0, len(list))
	for i, item := range list {
		rloc := locAt(loc, i)
		m, ok := v.strictObject(item, rloc, "action", "target")
		if !ok {
			continue
		}
		var r egress.Rule
		if _, has := m["action"]; !has {
			v.add(missing(locAt(rloc, "action"), m))
		} else {
			r.Action = v.ruleAction(m["action"], locAt(rloc, "action"))
		}
		t, has := m["target"]
		switch s, isString := t.(string); {
		case isString:
			r.Target = s
		case !has:
			v.add(missing(locAt(rloc, "target"), m))
		default:
			v.add(typeErr(locAt(rloc, "target"), "string_type", "Input should be a valid string", t))
		}
		out = append(out, r)
	}
	return out
}

// ruleAction reads 'allow' or 'deny', exactly, as the lifecycle schema's enum does.
func (v *fields) ruleAction(x any, loc []any) string {
	if s, ok := x.(string); ok && (s == egress.Allow || s == egress.Deny) {
		return s
	}
	v.add(detail{Type: "literal_error", Loc: loc, Input: x, Msg: "Input should be 'allow' or 'deny'",
		Ctx: map[string]any{"expected": "'allow' or 'deny'"}})
	return ""
}

func (v *fields) ruleTargets(x any, loc []any) []string {
	list, ok := x.([]any)
	if !ok {
		v.add(typeErr(loc, "list_type", "Input should be a valid list", x))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			v.add(typeErr(locAt(loc, i), "string_type", "Input should be a valid string", item))
			continue
		}
		out = append(out, s)
	}
	return out
}

// seedEgress gives a new sandbox its create-time egress state: the intent
// of a template sandbox, or its sidecar's policy and Credential Proxy flag.
func (s *Server) seedEgress(rec *record, seed egressSeed) {
	if rec.origin == originTemplate {
		rec.egressIntent = egress.DenyAll() // what the real server reports for a template sandbox without policy
		if seed.policy != nil {
			rec.egressIntent = *seed.policy
		}
		if in := rec.data.intent; in != nil {
			in.Configure(&rec.egressIntent, false)
		}
		return
	}
	if sc, ok := rec.data.ports[EgressPort].(interface {
		Configure(*egress.Policy, bool)
	}); ok {
		sc.Configure(seed.policy, seed.credentialProxy)
	}
	if seed.given {
		p := egress.AllowAll()
		if seed.policy != nil {
			p = *seed.policy
		}
		how := "NOT enforced: the local runtime does not filter traffic"
		if sc, ok := rec.data.ports[EgressPort].(*egress.Sidecar); ok && sc.Enforced() {
			how = "enforced by the egress proxy"
		}
		s.log.event("sandbox %s: egress policy stored (default %s, %d rule(s)); %s", rec.id, p.DefaultAction, len(p.Egress), how)
	}
}

// The networkpolicy routes validate the body as the real server does (422
// for shapes), then serve a template sandbox from its stored intent and
// hand any other sandbox's request to whatever serves its egress port.

func (s *Server) networkPolicyRoutes(handle func(method, path string, h http.HandlerFunc)) {
	const path = "/sandboxes/{id}/networkpolicy"
	handle("GET", path, s.getNetworkPolicy)
	handle("PUT", path, s.putNetworkPolicy)
	handle("PATCH", path, s.patchNetworkPolicy)
	handle("DELETE", path, s.deleteNetworkPolicy)
}

func (s *Server) getNetworkPolicy(w http.ResponseWriter, r *http.Request) {
	s.networkPolicy(w, r, nil, func(p egress.Policy) (egress.Policy, error) { return p, nil })
}

func (s *Server) putNetworkPolicy(w http.ResponseWriter, r *http.Request) {
	s.changeNetworkPolicy(w, r, func(v *fields, x any) policyChange {
		p, _ := v.networkPolicy(x, []any{"body"})
		return func(egress.Policy) (egress.Policy, error) { return p.Normalize() }
	})
}

func (s *Server) patchNetworkPolicy(w http.ResponseWriter, r *http.Request) {
	s.changeNetworkPolicy(w, r, func(v *fields, x any) policyChange {
		rules := v.egressRules(x, []any{"body"})
		return func(p egress.Policy) (egress.Policy, error) {
			n, err := egress.NormalizeRules(rules)
			return p.MergeInPlace(n), err
		}
	})
}

func (s *Server) deleteNetworkPolicy(w http.ResponseWriter, r *http.Request) {
	s.changeNetworkPolicy(w, r, func(v *fields, x any) policyChange {
		targets := v.ruleTargets(x, []any{"body"})
		return func(p egress.Policy) (egress.Policy, error) {
			next, _ := p.Without(targets)
			return next, nil
		}
	})
}

// policyChange turns a template sandbox's current intent into the next one.
type policyChange func(egress.Policy) (egress.Policy, error)

// changeNetworkPolicy reads the body, lets parse check its shape (422 on
// any detail) and applies the change parse returns.
func (s *Server) changeNetworkPolicy(w http.ResponseWriter, r *http.Request, parse func(*fields, any) policyChange) {
	raw, x, ok := readValue(w, r)
	if !ok {
		return
	}
	var v fields
	change := parse(&v, x)
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return
	}
	s.networkPolicy(w, r, raw, change)
}

// networkPolicy answers for one sandbox: change applied to the intent of a
// template sandbox, or the request (body raw) passed to its egress port.
func (s *Server) networkPolicy(w http.ResponseWriter, r *http.Request, raw []byte, change policyChange) {
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	if rec.origin != originTemplate {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		rec.data.servePort(w, r, EgressPort, "/policy")
		return
	}
	s.mu.Lock()
	next, err := change(rec.egressIntent)
	if err == nil {
		rec.egressIntent = next
		if in := rec.data.intent; in != nil {
			in.Configure(&next, false)
		}
	}
	s.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidParameter, "Invalid network policy: "+err.Error())
		return
	}
	st := egress.StatusOf(next, true)
	if in := rec.data.intent; in != nil {
		st = in.Status(true)
	}
	if r.Method != http.MethodGet {
		s.log.event("sandbox %s: egress intent %s: default %s, %d rule(s), enforcement %s",
			rec.id, r.Method, next.DefaultAction, len(next.Egress), st.EnforcementMode)
	}
	writeJSON(w, http.StatusOK, st)
}
