package credentialvault

import "github.com/osb-dev/osb/internal/client"

// Views are what osb prints: the official client's snake_case keys, every
// key present (null when unset). None of them has a field for a secret.

type stateView struct {
	Revision    int64            `json:"revision"`
	Credentials []credentialView `json:"credentials"`
	Bindings    []bindingView    `json:"bindings"`
}

type credentialView struct {
	Name       string `json:"name" table:"1"`
	SourceType string `json:"source_type" table:"2"`
	Revision   int64  `json:"revision" table:"3"`
}

type bindingView struct {
	Name     string     `json:"name" table:"1"`
	Revision int64      `json:"revision" table:"2"`
	Match    *matchView `json:"match" table:"3"`
	Auth     *authView  `json:"auth" table:"4"`
}

type matchView struct {
	Schemes []string `json:"schemes"`
	Ports   []int    `json:"ports"`
	Hosts   []string `json:"hosts"`
	Methods []string `json:"methods"`
	Paths   []string `json:"paths"`
}

type authView struct {
	Type string  `json:"type"`
	Name *string `json:"name"`
}

func newStateView(st *client.CredentialVaultState) stateView {
	return stateView{Revision: st.Revision, Credentials: views(st.Credentials, newCredentialView), Bindings: views(st.Bindings, newBindingView)}
}

func newCredentialView(c client.CredentialMetadata) credentialView {
	return credentialView{Name: c.Name, SourceType: c.SourceType, Revision: c.Revision}
}

func newBindingView(b client.BindingMetadata) bindingView {
	v := bindingView{Name: b.Name, Revision: b.Revision}
	if m := b.Match; m != nil {
		v.Match = &matchView{Schemes: m.Schemes, Ports: m.Ports, Hosts: m.Hosts, Methods: m.Methods, Paths: m.Paths}
	}
	if a := b.Auth; a != nil {
		v.Auth = &authView{Type: a.Type, Name: a.Name}
	}
	return v
}

// views is the view of each of xs, an empty list (never null) for none.
func views[W, V any](xs []W, view func(W) V) []V {
	out := make([]V, 0, len(xs))
	for _, x := range xs {
		out = append(out, view(x))
	}
	return out
}
