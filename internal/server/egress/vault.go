package egress

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Vault errors the handlers map to status codes.
var (
	errVaultMissing = errors.New("credential vault not found")
	errVaultExists  = errors.New("credential vault already exists")
)

// conflictError is a stale expectedRevision (409).
type conflictError struct{ expected, current int64 }

func (e *conflictError) Error() string {
	return fmt.Sprintf("expectedRevision %d does not match current revision %d", e.expected, e.current)
}

// Wire shapes of the Credential Vault requests.
type (
	credentialIn struct {
		Name   string   `json:"name"`
		Source sourceIn `json:"source"`
	}
	sourceIn struct {
		Type  string `json:"type"`
		Value string `json:"value"` // write-only: kept in memory, never returned, logged or written to disk
	}
	bindingIn struct {
		Name  string `json:"name"`
		Match Match  `json:"match"`
		Auth  authIn `json:"auth"`
	}
	authIn struct {
		Type          string         `json:"type"`
		Credential    string         `json:"credential,omitempty"`
		Name          string         `json:"name,omitempty"`
		Headers       []headerIn     `json:"headers,omitempty"`
		Substitutions []substitution `json:"substitutions,omitempty"`
	}
	headerIn struct {
		Name       string `json:"name"`
		Credential string `json:"credential"`
	}
	substitution struct {
		Credential  string   `json:"credential"`
		Placeholder string   `json:"placeholder"`
		In          []string `json:"in"`
	}
	createRequest struct {
		Credentials []credentialIn `json:"credentials"`
		Bindings    []bindingIn    `json:"bindings"`
	}
	mutationRequest struct {
		ExpectedRevision *int64                   `json:"expectedRevision"`
		Credentials      *mutations[credentialIn] `json:"credentials"`
		Bindings         *mutations[bindingIn]    `json:"bindings"`
	}
	mutations[T any] struct {
		Add     []T      `json:"add"`
		Replace []T      `json:"replace"`
		Delete  []string `json:"delete"`
	}
)

// Match selects the requests a binding applies to.
type Match struct {
	Schemes []string `json:"schemes,omitempty"`
	Ports   []int    `json:"ports,omitempty"`
	Hosts   []string `json:"hosts"`
	Methods []string `json:"methods,omitempty"`
	Paths   []string `json:"paths,omitempty"`
}

// Sanitized shapes: what GET returns. No secret value has a field here.
type (
	vaultState struct {
		Revision    int64          `json:"revision"`
		Credentials []credentialMD `json:"credentials"`
		Bindings    []bindingMD    `json:"bindings"`
	}
	credentialMD struct {
		Name       string `json:"name"`
		SourceType string `json:"sourceType"`
		Revision   int64  `json:"revision"`
	}
	bindingMD struct {
		Name     string `json:"name"`
		Revision int64  `json:"revision"`
		Match    Match  `json:"match"`
		Auth     authMD `json:"auth"`
	}
	authMD struct {
		Type string `json:"type"`
		Name string `json:"name,omitempty"`
	}
)

// storedCredential is a credential with its value and the revision that last set it.
type storedCredential struct {
	sourceType string
	value      string
	revision   int64
}

type storedBinding struct {
	b        bindingIn
	revision int64
}

// vault is the sandbox-local Credential Vault. The sidecar's mutex guards it.
type vault struct {
	revision    int64
	credentials map[string]storedCredential
	bindings    map[string]storedBinding
}

func newVault(req createRequest, p Policy) (*vault, error) {
	v := &vault{revision: 1, credentials: map[string]storedCredential{}, bindings: map[string]storedBinding{}}
	for _, c := range req.Credentials {
		name, sc, err := normalizeCredential(c, 1)
		if err != nil {
			return nil, err
		}
		if _, dup := v.credentials[name]; dup {
			return nil, fmt.Errorf("duplicate credential name %q", name)
		}
		v.credentials[name] = sc
	}
	for _, b := range req.Bindings {
		nb, err := normalizeBinding(b)
		if err != nil {
			return nil, err
		}
		if _, dup := v.bindings[nb.Name]; dup {
			return nil, fmt.Errorf("duplicate binding name %q", nb.Name)
		}
		v.bindings[nb.Name] = storedBinding{b: nb, revision: 1}
	}
	return v, v.check(p)
}

// patched returns the vault after req, leaving v untouched on any error:
// a mutation applies completely or not at all.
func (v *vault) patched(req mutationRequest, p Policy) (*vault, error) {
	if req.ExpectedRevision != nil && *req.ExpectedRevision != v.revision {
		return nil, &conflictError{*req.ExpectedRevision, v.revision}
	}
	next := &vault{revision: v.revision + 1, credentials: cloneMap(v.credentials), bindings: cloneMap(v.bindings)}
	if req.Credentials != nil {
		err := applyMutations(next.credentials, *req.Credentials, "credential", func(c credentialIn) (string, storedCredential, error) {
			return normalizeCredential(c, next.revision)
		})
		if err != nil {
			return nil, err
		}
	}
	if req.Bindings != nil {
		err := applyMutations(next.bindings, *req.Bindings, "binding", func(b bindingIn) (string, storedBinding, error) {
			nb, err := normalizeBinding(b)
			return nb.Name, storedBinding{b: nb, revision: next.revision}, err
		})
		if err != nil {
			return nil, err
		}
	}
	return next, next.check(p)
}

func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// applyMutations runs delete, then replace, then add on m. A name may be
// named by one operation only; replace and delete need it to exist, add
// needs it not to.
func applyMutations[In, V any](m map[string]V, ops mutations[In], kind string, norm func(In) (string, V, error)) error {
	named := map[string]bool{}
	claim := func(name string) error {
		if named[name] {
			return fmt.Errorf("%s %q is named by more than one operation", kind, name)
		}
		named[name] = true
		return nil
	}
	for _, raw := range ops.Delete {
		name := strings.TrimSpace(raw)
		if name == "" {
			return fmt.Errorf("%s delete name cannot be blank", kind)
		}
		if err := claim(name); err != nil {
			return err
		}
		if _, ok := m[name]; !ok {
			return fmt.Errorf("%s %q does not exist", kind, name)
		}
		delete(m, name)
	}
	for _, in := range ops.Replace {
		name, v, err := norm(in)
		if err == nil {
			err = claim(name)
		}
		if err != nil {
			return err
		}
		if _, ok := m[name]; !ok {
			return fmt.Errorf("%s %q does not exist", kind, name)
		}
		m[name] = v
	}
	for _, in := range ops.Add {
		name, v, err := norm(in)
		if err == nil {
			err = claim(name)
		}
		if err != nil {
			return err
		}
		if _, ok := m[name]; ok {
			return fmt.Errorf("%s %q already exists", kind, name)
		}
		m[name] = v
	}
	return nil
}

// check validates the vault as a whole against the egress policy: every
// credential a binding uses exists, every host it serves is explicitly
// allowed, and no two bindings can claim the same request.
func (v *vault) check(p Policy) error {
	if len(v.bindings) > 0 && len(p.Egress) == 0 {
		return errors.New("credential bindings require explicit networkPolicy.egress allow rules")
	}
	for _, name := range slices.Sorted(maps.Keys(v.bindings)) {
		b := v.bindings[name].b
		for _, ref := range b.Auth.credentialRefs() {
			if _, ok := v.credentials[ref]; !ok {
				return fmt.Errorf("binding %q references unknown credential %q", b.Name, ref)
			}
		}
		for _, host := range b.Match.Hosts {
			if !allowCovers(p, host) {
				return fmt.Errorf("binding %q host %q is not covered by an explicit allow egress rule", b.Name, host)
			}
		}
	}
	return v.checkOverlaps()
}

func (v *vault) checkOverlaps() error {
	names := slices.Sorted(maps.Keys(v.bindings))
	for i, a := range names {
		for _, b := range names[i+1:] {
			if overlaps(v.bindings[a].b.Match, v.bindings[b].b.Match) {
				return fmt.Errorf("bindings %q and %q can match the same request", a, b)
			}
		}
	}
	return nil
}

// allowCovers reports whether an allow rule names host (or a wildcard over
// it) and the policy as a whole lets host through. For a wildcard host, a
// name under it stands in for every name it covers.
func allowCovers(p Policy, host string) bool {
	probe := host
	if suffix, ok := strings.CutPrefix(host, "*."); ok {
		probe = "probe." + suffix
	}
	for _, r := range p.Egress {
		t := targetKey(r.Target)
		if r.Action == Allow && (t == host || strings.HasPrefix(t, "*.") && hostMatches(probe, t)) {
			return p.Decide(probe) == Allow
		}
	}
	return false
}

// overlaps reports whether one request could match both bindings at the
// same precedence (exact hosts against exact hosts, wildcards against
// wildcards).
func overlaps(a, b Match) bool {
	return intersects(a.Schemes, b.Schemes) && intersects(a.Methods, b.Methods) &&
		pathsOverlap(a.Paths, b.Paths) && hostsOverlap(a.Hosts, b.Hosts)
}

func intersects(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func hostsOverlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			xs, xw := strings.CutPrefix(x, "*.")
			ys, yw := strings.CutPrefix(y, "*.")
			switch {
			case xw != yw:
			case !xw && x == y:
				return true
			case xw && (xs == ys || strings.HasSuffix(xs, "."+ys) || strings.HasSuffix(ys, "."+xs)):
				return true
			}
		}
	}
	return false
}

// pathsOverlap: patterns are literal paths, or prefixes ending in *.
func pathsOverlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			xp, xw := strings.CutSuffix(x, "*")
			yp, yw := strings.CutSuffix(y, "*")
			switch {
			case x == y,
				xw && strings.HasPrefix(y, xp),
				yw && strings.HasPrefix(x, yp):
				return true
			}
		}
	}
	return false
}

func normalizeCredential(c credentialIn, revision int64) (string, storedCredential, error) {
	name := strings.TrimSpace(c.Name)
	if name == "" {
		return "", storedCredential{}, errors.New("credential name cannot be blank")
	}
	typ := strings.TrimSpace(c.Source.Type)
	if typ == "" {
		typ = "inline"
	}
	if typ != "inline" {
		return "", storedCredential{}, fmt.Errorf("credential %q: unsupported source type %q (only inline)", name, typ)
	}
	if c.Source.Value == "" {
		return "", storedCredential{}, fmt.Errorf("credential %q: inline value cannot be empty", name)
	}
	return name, storedCredential{sourceType: typ, value: c.Source.Value, revision: revision}, nil
}

func normalizeBinding(b bindingIn) (bindingIn, error) {
	b.Name = strings.TrimSpace(b.Name)
	if b.Name == "" {
		return b, errors.New("binding name cannot be blank")
	}
	var err error
	if b.Match, err = normalizeMatch(b.Match); err == nil {
		b.Auth, err = normalizeAuth(b.Auth)
	}
	if err != nil {
		return b, fmt.Errorf("binding %q: %w", b.Name, err)
	}
	return b, nil
}

var defaultMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// normalizeMatch fills the spec's defaults and canonicalises every list.
// The deprecated ports take 80 and 443 only and decide nothing (the port
// follows the scheme), but are kept and shown as given, as the sidecar
// does, so that a client reads back the binding it wrote.
func normalizeMatch(m Match) (Match, error) {
	out := Match{Schemes: []string{"https"}, Methods: defaultMethods, Paths: []string{"/*"}}
	if len(m.Hosts) == 0 {
		return out, errors.New("match.hosts cannot be empty")
	}
	for _, p := range m.Ports {
		if p != 80 && p != 443 {
			return out, fmt.Errorf("match.ports: port %d is not supported; the port follows the scheme (https 443, http 80)", p)
		}
		if !slices.Contains(out.Ports, p) {
			out.Ports = append(out.Ports, p)
		}
	}
	var err error
	if len(m.Schemes) > 0 {
		out.Schemes, err = canonical(m.Schemes, strings.ToLower, func(s string) error {
			if s != "https" && s != "http" {
				return fmt.Errorf("unsupported scheme %q (use https or http)", s)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	if out.Hosts, err = canonical(m.Hosts, func(h string) string { return strings.ToLower(strings.TrimSuffix(h, ".")) }, checkBindingHost); err != nil {
		return out, err
	}
	if len(m.Methods) > 0 {
		if out.Methods, err = canonical(m.Methods, strings.ToUpper, nonBlank("method")); err != nil {
			return out, err
		}
	}
	if len(m.Paths) > 0 {
		out.Paths, err = canonical(m.Paths, func(s string) string { return s }, func(p string) error {
			if !strings.HasPrefix(p, "/") {
				return fmt.Errorf("path pattern %q must start with /", p)
			}
			return nil
		})
	}
	return out, err
}

// canonical trims, transforms, checks and de-duplicates a list, keeping order.
func canonical(in []string, transform func(string) string, check func(string) error) ([]string, error) {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, s := range in {
		s = transform(strings.TrimSpace(s))
		if err := check(s); err != nil {
			return nil, err
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, nil
}

func nonBlank(what string) func(string) error {
	return func(s string) error {
		if s == "" {
			return fmt.Errorf("%s cannot be blank", what)
		}
		return nil
	}
}

// Compiled on first use, not at start-up, which every command pays for.
var hostLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`) })

// checkBindingHost accepts a fully qualified domain name, or *. before one.
func checkBindingHost(h string) error {
	name, wildcard := strings.CutPrefix(h, "*.")
	switch {
	case h == "":
		return errors.New("host cannot be blank")
	case strings.Contains(h, "/"):
		return fmt.Errorf("host %q must not include a scheme or path", h)
	case strings.Contains(name, "*"):
		return fmt.Errorf("invalid wildcard host %q: only a leftmost *. is allowed", h)
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return fmt.Errorf("host %q must be a domain name, not an IP address", h)
	}
	labels := strings.Split(name, ".")
	ok := len(name) <= 253 && len(labels) >= 2
	for _, l := range labels {
		ok = ok && hostLabel().MatchString(l)
	}
	if !ok {
		if wildcard {
			return fmt.Errorf("invalid wildcard host %q", h)
		}
		return fmt.Errorf("host %q must be a fully qualified domain name", h)
	}
	return nil
}

var headerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$") })

// reservedHeaders cannot carry credentials: they frame or route the request.
var reservedHeaders = map[string]bool{
	"host": true, "content-length": true, "content-type": true, "transfer-encoding": true,
	"connection": true, "upgrade": true, "te": true, "trailer": true, "proxy-authorization": true,
	"proxy-authenticate": true, "forwarded": true, "x-forwarded-for": true, "x-forwarded-host": true,
	"x-forwarded-proto": true,
}

func checkHeaderName(n string) error {
	if !headerName().MatchString(n) {
		return fmt.Errorf("invalid credential header name %q", n)
	}
	if reservedHeaders[strings.ToLower(n)] {
		return fmt.Errorf("header %q cannot carry a credential", n)
	}
	return nil
}

var substitutionSurfaces = map[string]bool{"path": true, "query": true, "header": true, "body": true}

func normalizeAuth(a authIn) (authIn, error) {
	a.Type = strings.TrimSpace(a.Type)
	a.Credential = strings.TrimSpace(a.Credential)
	needCredential := func() error {
		if a.Credential == "" {
			return fmt.Errorf("%s auth requires credential", a.Type)
		}
		return nil
	}
	var err error
	switch a.Type {
	case "bearer", "basic":
		err = needCredential()
	case "apiKey":
		a.Name = http.CanonicalHeaderKey(strings.TrimSpace(a.Name))
		if err = checkHeaderName(a.Name); err == nil {
			err = needCredential()
		}
	case "customHeaders":
		a.Headers, err = normalizeHeaders(a.Headers)
	case "passthrough":
	default:
		err = fmt.Errorf("unsupported auth type %q (use bearer, basic, apiKey, customHeaders or passthrough)", a.Type)
	}
	if err != nil {
		return a, err
	}
	for i, s := range a.Substitutions {
		if strings.TrimSpace(s.Credential) == "" || s.Placeholder == "" || len(s.In) == 0 {
			return a, fmt.Errorf("auth.substitutions[%d] needs credential, placeholder and in", i)
		}
		for _, in := range s.In {
			if !substitutionSurfaces[in] {
				return a, fmt.Errorf("auth.substitutions[%d]: unsupported surface %q (use path, query, header or body)", i, in)
			}
		}
		a.Substitutions[i].Credential = strings.TrimSpace(s.Credential)
	}
	return a, nil
}

func normalizeHeaders(hs []headerIn) ([]headerIn, error) {
	if len(hs) == 0 {
		return nil, errors.New("customHeaders auth requires headers")
	}
	out := make([]headerIn, len(hs))
	seen := map[string]bool{}
	for i, h := range hs {
		h.Name = http.CanonicalHeaderKey(strings.TrimSpace(h.Name))
		h.Credential = strings.TrimSpace(h.Credential)
		if err := checkHeaderName(h.Name); err != nil {
			return nil, err
		}
		if seen[h.Name] {
			return nil, fmt.Errorf("duplicate custom header name %q", h.Name)
		}
		seen[h.Name] = true
		if h.Credential == "" {
			return nil, fmt.Errorf("customHeaders entry %q requires credential", h.Name)
		}
		out[i] = h
	}
	return out, nil
}

// credentialRefs are the credential names an auth rule uses.
func (a authIn) credentialRefs() []string {
	var refs []string
	if a.Credential != "" {
		refs = append(refs, a.Credential)
	}
	for _, h := range a.Headers {
		refs = append(refs, h.Credential)
	}
	for _, s := range a.Substitutions {
		refs = append(refs, s.Credential)
	}
	return refs
}

// state is the sanitized view: names, source types, revisions, matches and
// auth types. Values never leave the vault.
func (v *vault) state() vaultState {
	st := vaultState{Revision: v.revision, Credentials: []credentialMD{}, Bindings: []bindingMD{}}
	for _, name := range slices.Sorted(maps.Keys(v.credentials)) {
		c := v.credentials[name]
		st.Credentials = append(st.Credentials, credentialMD{Name: name, SourceType: c.sourceType, Revision: c.revision})
	}
	for _, name := range slices.Sorted(maps.Keys(v.bindings)) {
		b := v.bindings[name]
		md := bindingMD{Name: name, Revision: b.revision, Match: b.b.Match, Auth: authMD{Type: b.b.Auth.Type}}
		if b.b.Auth.Type == "apiKey" {
			md.Auth.Name = b.b.Auth.Name
		}
		st.Bindings = append(st.Bindings, md)
	}
	return st
}
