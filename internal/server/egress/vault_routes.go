package egress

import (
	"errors"
	"net/http"
)

// vaultError answers a vault failure with the sidecar's status codes:
// 404 no vault, 409 exists or stale revision, 400 anything invalid.
func vaultError(w http.ResponseWriter, err error) {
	var conflict *conflictError
	switch {
	case errors.Is(err, errVaultMissing):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, errVaultExists), errors.As(err, &conflict):
		http.Error(w, err.Error(), http.StatusConflict)
	default:
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}

// ready is the write precondition: the sandbox must have been created with
// Credential Proxy (412 otherwise, as from a sidecar without transparent MITM).
func (s *Sidecar) ready(w http.ResponseWriter) bool {
	s.mu.Lock()
	ok := s.credentialProxy
	s.mu.Unlock()
	if !ok {
		http.Error(w, "credential vault requires Credential Proxy: create the sandbox with credentialProxy.enabled and a networkPolicy",
			http.StatusPreconditionFailed)
	}
	return ok
}

// state returns the sanitized vault, or errVaultMissing.
func (s *Sidecar) state() (vaultState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vault == nil {
		return vaultState{}, errVaultMissing
	}
	return s.vault.state(), nil
}

func (s *Sidecar) getVault(w http.ResponseWriter, r *http.Request) {
	s.answer(w, "", func(st vaultState) (any, bool) { return st, true })
}

func (s *Sidecar) createVault(w http.ResponseWriter, r *http.Request) {
	if !s.ready(w) {
		return
	}
	raw, ok := readBody(w, r)
	if !ok {
		return
	}
	var req createRequest
	if err := decodeStrict(raw, &req); err != nil {
		http.Error(w, "invalid credential vault request: "+err.Error(), http.StatusBadRequest)
		return
	}
	// Missing or null credentials and bindings are none, as on the sidecar.
	s.mu.Lock()
	var v *vault
	err := errVaultExists
	if s.vault == nil {
		if v, err = newVault(req, s.policy); err == nil {
			s.vault = v
		}
	}
	s.mu.Unlock()
	if err != nil {
		vaultError(w, err)
		return
	}
	s.logVault("created", v)
	writeJSON(w, http.StatusCreated, v.state())
}

func (s *Sidecar) patchVault(w http.ResponseWriter, r *http.Request) {
	if !s.ready(w) {
		return
	}
	raw, ok := readBody(w, r)
	if !ok {
		return
	}
	var req mutationRequest
	if err := decodeStrict(raw, &req); err != nil {
		http.Error(w, "invalid credential vault mutation request: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	var next *vault
	err := errVaultMissing
	if s.vault != nil {
		if next, err = s.vault.patched(req, s.policy); err == nil {
			s.vault = next
		}
	}
	s.mu.Unlock()
	if err != nil {
		vaultError(w, err)
		return
	}
	s.logVault("patched", next)
	writeJSON(w, http.StatusOK, next.state())
}

func (s *Sidecar) deleteVault(w http.ResponseWriter, r *http.Request) {
	if !s.ready(w) {
		return
	}
	s.mu.Lock()
	had := s.vault != nil
	s.vault = nil
	s.mu.Unlock()
	if !had {
		vaultError(w, errVaultMissing)
		return
	}
	s.log("sandbox %s: credential vault deleted", s.id)
	w.WriteHeader(http.StatusNoContent)
}

// logVault records a change by counts and revision only: no name of a
// header, no value. Without the egress proxy (SetEnforcement) nothing
// injects the credentials, and the line says so.
func (s *Sidecar) logVault(what string, v *vault) {
	note := ""
	if !s.Enforced() {
		note = "; stored only: the local runtime injects no credentials"
	}
	s.log("sandbox %s: credential vault %s (revision %d, %d credential(s), %d binding(s))%s",
		s.id, what, v.revision, len(v.credentials), len(v.bindings), note)
}

// answer writes what pick takes from the vault, or 404 with notFound when
// pick finds nothing.
func (s *Sidecar) answer(w http.ResponseWriter, notFound string, pick func(vaultState) (any, bool)) {
	st, err := s.state()
	if err != nil {
		vaultError(w, err)
		return
	}
	v, ok := pick(st)
	if !ok {
		http.Error(w, notFound, http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// named finds the item called name.
func named[T any](items []T, name string, nameOf func(T) string) (any, bool) {
	for _, it := range items {
		if nameOf(it) == name {
			return it, true
		}
	}
	return nil, false
}

func (s *Sidecar) listCredentials(w http.ResponseWriter, r *http.Request) {
	s.answer(w, "", func(st vaultState) (any, bool) {
		return struct {
			Revision    int64          `json:"revision"`
			Credentials []credentialMD `json:"credentials"`
		}{st.Revision, st.Credentials}, true
	})
}

func (s *Sidecar) getCredential(w http.ResponseWriter, r *http.Request) {
	s.answer(w, "credential not found", func(st vaultState) (any, bool) {
		return named(st.Credentials, r.PathValue("name"), func(c credentialMD) string { return c.Name })
	})
}

func (s *Sidecar) listBindings(w http.ResponseWriter, r *http.Request) {
	s.answer(w, "", func(st vaultState) (any, bool) {
		return struct {
			Revision int64       `json:"revision"`
			Bindings []bindingMD `json:"bindings"`
		}{st.Revision, st.Bindings}, true
	})
}

func (s *Sidecar) getBinding(w http.ResponseWriter, r *http.Request) {
	s.answer(w, "binding not found", func(st vaultState) (any, bool) {
		return named(st.Bindings, r.PathValue("name"), func(b bindingMD) string { return b.Name })
	})
}
