// Package egress is the local server's egress sidecar (sandbox port 18080):
// the /policy API and the sandbox-local Credential Vault of the OpenSandbox
// egress contract, with its status codes and text/plain errors, and the
// sandbox's HTTP egress proxy (proxy.go), which enforces that policy and
// injects the vault's credentials into plain HTTP requests and, by
// intercepting the tunnels to bound hosts (intercept.go), into HTTPS ones.
//
// The policy is enforced only where the runtime makes the proxy the
// sandbox's only way out and says so (SetEnforcement); until then every
// policy response says it is not (enforcementMode "none" and a reason), as
// does the server log.
package egress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// EnforcementMode is what a sidecar reports until SetEnforcement: nothing
// is enforced.
const EnforcementMode = "none"

// NotEnforced is the reason policy responses carry while nothing is enforced.
const NotEnforced = "egress rules are stored and reported but not enforced: the local osb server runs sandboxes on the host network"

// maxBody caps request bodies, as the real sidecar does (1 MiB).
const maxBody = 1 << 20

// Options configures a sidecar.
type Options struct {
	// Policy is the initial policy; nil means none was given at create,
	// which starts allow-all.
	Policy *Policy
	// CredentialProxy says the sandbox was created with credentialProxy
	// enabled; without it the Credential Vault answers 412, as a real
	// sidecar started without transparent MITM does.
	CredentialProxy bool
	// Log receives one line per change (never a credential value); nil discards.
	Log func(format string, args ...any)
}

// Sidecar serves one sandbox's egress API.
type Sidecar struct {
	id  string
	log func(format string, args ...any)
	mux *http.ServeMux

	mu              sync.Mutex
	policy          Policy
	credentialProxy bool
	vault           *vault // nil until created
	enforcement     string // EnforcementMode, or ProxyEnforcement once SetEnforcement says so
}

// New returns the sidecar of sb (nil is allowed: the id then reads "-").
func New(sb *sandbox.Sandbox, opts Options) *Sidecar {
	s := &Sidecar{id: "-", log: opts.Log, policy: AllowAll(), mux: http.NewServeMux(), enforcement: EnforcementMode}
	if sb != nil {
		s.id = sb.ID()
	}
	if s.log == nil {
		s.log = func(string, ...any) {}
	}
	s.Configure(opts.Policy, opts.CredentialProxy)
	s.routes()
	return s
}

// Configure sets the create-time state: the policy (nil: allow-all) and
// whether Credential Proxy was asked for.
func (s *Sidecar) Configure(p *Policy, credentialProxy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policy = AllowAll()
	if p != nil {
		s.policy = *p
	}
	s.credentialProxy = credentialProxy
}

// SetEnforcement records how the runtime enforces the policy (e.g.
// ProxyEnforcement: the egress proxy is the sandbox's only way out); policy
// responses report it from then on.
func (s *Sidecar) SetEnforcement(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enforcement = mode
}

// Enforced reports whether the policy is enforced.
func (s *Sidecar) Enforced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enforcement != EnforcementMode
}

// Policy returns the current policy.
func (s *Sidecar) Policy() Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy
}

func (s *Sidecar) routes() {
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	s.mux.HandleFunc("GET /policy", s.getPolicy)
	s.mux.HandleFunc("POST /policy", s.replacePolicy)
	s.mux.HandleFunc("PUT /policy", s.replacePolicy)
	s.mux.HandleFunc("PATCH /policy", s.patchPolicy)
	s.mux.HandleFunc("DELETE /policy", s.deletePolicy)
	s.mux.HandleFunc("GET /credential-vault", s.getVault)
	s.mux.HandleFunc("POST /credential-vault", s.createVault)
	s.mux.HandleFunc("PATCH /credential-vault", s.patchVault)
	s.mux.HandleFunc("DELETE /credential-vault", s.deleteVault)
	s.mux.HandleFunc("GET /credential-vault/credentials", s.listCredentials)
	s.mux.HandleFunc("GET /credential-vault/credentials/{name}", s.getCredential)
	s.mux.HandleFunc("GET /credential-vault/bindings", s.listBindings)
	s.mux.HandleFunc("GET /credential-vault/bindings/{name}", s.getBinding)
}

// ServeHTTP answers like the real sidecar: JSON on success, a one-line
// text/plain body on any error (ServeMux's own 404 and 405 included).
func (s *Sidecar) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Status is the PolicyStatusResponse.
type Status struct {
	Status          string  `json:"status"`
	Mode            string  `json:"mode"`
	EnforcementMode string  `json:"enforcementMode"`
	Reason          string  `json:"reason,omitempty"`
	Policy          *Policy `json:"policy,omitempty"`
}

// Status reports the sidecar's policy and how it is enforced.
func (s *Sidecar) Status(withPolicy bool) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return statusOf(s.policy, withPolicy, s.enforcement)
}

// StatusOf reports a policy that nothing enforces; withPolicy includes it
// (GET does, changes do not).
func StatusOf(p Policy, withPolicy bool) Status {
	return statusOf(p, withPolicy, EnforcementMode)
}

func statusOf(p Policy, withPolicy bool, enforcement string) Status {
	st := Status{Status: "ok", Mode: p.Mode(), EnforcementMode: enforcement}
	if enforcement == EnforcementMode {
		st.Reason = NotEnforced
	}
	if withPolicy {
		st.Policy = &p
	}
	return st
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// readBody reads a bounded body and trims it; an unreadable or oversized
// body has already been answered with 400 when ok is false.
func readBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "failed to read body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return []byte(strings.TrimSpace(string(b))), true
}

func (s *Sidecar) getPolicy(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st := statusOf(s.policy, true, s.enforcement)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, st)
}

// replacePolicy is POST/PUT /policy: a whole new policy; an empty body
// resets to deny-all, as the real sidecar does.
func (s *Sidecar) replacePolicy(w http.ResponseWriter, r *http.Request) {
	raw, ok := readBody(w, r)
	if !ok {
		return
	}
	p := DenyAll()
	if len(raw) > 0 && string(raw) != "null" {
		var in Policy
		err := decodeStrict(raw, &in)
		if err == nil {
			p, err = in.Normalize()
		}
		if err != nil {
			http.Error(w, "invalid policy: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	s.commit(w, "replaced", func(Policy) (Policy, string) { return p, "" })
}

func (s *Sidecar) patchPolicy(w http.ResponseWriter, r *http.Request) {
	rules, ok := readList[Rule](w, r, "patch rules")
	if !ok {
		return
	}
	rules, err := NormalizeRules(rules)
	if err != nil {
		http.Error(w, "invalid patch rules: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.commit(w, fmt.Sprintf("patched with %d rule(s)", len(rules)), func(cur Policy) (Policy, string) {
		return cur.Merge(rules), ""
	})
}

func (s *Sidecar) deletePolicy(w http.ResponseWriter, r *http.Request) {
	targets, ok := readList[string](w, r, "delete targets")
	if !ok {
		return
	}
	s.commit(w, fmt.Sprintf("rules removed for %d target(s)", len(targets)), func(cur Policy) (Policy, string) {
		next, removed := cur.Without(targets)
		if removed == 0 {
			return cur, "no matching targets found; "
		}
		return next, ""
	})
}

// readList reads the non-empty JSON array body of PATCH and DELETE /policy;
// when ok is false the 400 has been written.
func readList[T any](w http.ResponseWriter, r *http.Request, what string) (items []T, ok bool) {
	raw, ok := readBody(w, r)
	if !ok {
		return nil, false
	}
	if len(raw) == 0 {
		http.Error(w, "empty body", http.StatusBadRequest)
		return nil, false
	}
	err := decodeStrict(raw, &items)
	if err == nil && len(items) == 0 {
		err = errors.New("empty array")
	}
	if err != nil {
		http.Error(w, "invalid "+what+": "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return items, true
}

// commit applies change under the lock, refuses a policy that would leave
// a Credential Vault binding uncovered, and answers the status.
func (s *Sidecar) commit(w http.ResponseWriter, what string, change func(Policy) (Policy, string)) {
	s.mu.Lock()
	next, note := change(s.policy)
	if s.vault != nil {
		if err := s.vault.check(next); err != nil {
			s.mu.Unlock()
			http.Error(w, "credential vault policy validation: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	s.policy = next
	enforcement := s.enforcement
	s.mu.Unlock()
	st := statusOf(next, false, enforcement)
	st.Reason = strings.TrimSuffix(note+st.Reason, "; ")
	if note == "" {
		how := "not enforced by the local runtime"
		if enforcement != EnforcementMode {
			how = "enforced by the egress proxy"
		}
		s.log("sandbox %s: egress policy %s: default %s, %d rule(s), mode %s (%s)",
			s.id, what, next.DefaultAction, len(next.Egress), next.Mode(), how)
	}
	writeJSON(w, http.StatusOK, st)
}
