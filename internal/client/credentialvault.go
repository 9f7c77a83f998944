package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Secret is a credential value. It goes on the wire as is, and prints as
// a mask everywhere else (%v, %s, %#v), so that no log or error line built
// from a request can show it.
type Secret string

const secretMask = "********"

func (Secret) String() string   { return secretMask }
func (Secret) GoString() string { return secretMask }

// MarshalJSON sends the real value: the wire is the only place it goes.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(string(s)) }

// Credential is a named secret kept in the sandbox's Credential Vault.
type Credential struct {
	Name   string           `json:"name"`
	Source CredentialSource `json:"source"`
}

// CredentialSource holds the secret; only inline sources exist.
type CredentialSource struct {
	Type  string `json:"type"`
	Value Secret `json:"value"`
}

// CredentialMatch selects the requests a binding applies to.
type CredentialMatch struct {
	Schemes []string `json:"schemes,omitempty"`
	Ports   []int    `json:"ports,omitempty"`
	Hosts   []string `json:"hosts"`
	Methods []string `json:"methods,omitempty"`
	Paths   []string `json:"paths,omitempty"`
}

// CredentialAuth says how a binding uses credentials (by name, never by value).
type CredentialAuth struct {
	Type          string                   `json:"type"`
	Credential    string                   `json:"credential,omitempty"`
	Name          string                   `json:"name,omitempty"`
	Headers       []CredentialHeader       `json:"headers,omitempty"`
	Substitutions []CredentialSubstitution `json:"substitutions,omitempty"`
}

// CredentialHeader is one header of a customHeaders auth.
type CredentialHeader struct {
	Name       string `json:"name"`
	Credential string `json:"credential"`
}

// CredentialSubstitution replaces a placeholder with a credential.
type CredentialSubstitution struct {
	Credential  string   `json:"credential"`
	Placeholder string   `json:"placeholder"`
	In          []string `json:"in"`
}

// CredentialBinding injects credentials into matching requests.
type CredentialBinding struct {
	Name  string          `json:"name"`
	Match CredentialMatch `json:"match"`
	Auth  CredentialAuth  `json:"auth"`
}

// CredentialVaultCreate is the body of the first write.
type CredentialVaultCreate struct {
	Credentials []Credential        `json:"credentials"`
	Bindings    []CredentialBinding `json:"bindings"`
}

// CredentialMutations changes credentials atomically.
type CredentialMutations struct {
	Add     []Credential `json:"add,omitempty"`
	Replace []Credential `json:"replace,omitempty"`
	Delete  []string     `json:"delete,omitempty"`
}

// BindingMutations changes bindings atomically.
type BindingMutations struct {
	Add     []CredentialBinding `json:"add,omitempty"`
	Replace []CredentialBinding `json:"replace,omitempty"`
	Delete  []string            `json:"delete,omitempty"`
}

// CredentialVaultPatch is one atomic mutation; ExpectedRevision, when set,
// makes it fail (409) if someone else changed the vault first.
type CredentialVaultPatch struct {
	ExpectedRevision *int64               `json:"expectedRevision,omitempty"`
	Credentials      *CredentialMutations `json:"credentials,omitempty"`
	Bindings         *BindingMutations    `json:"bindings,omitempty"`
}

// CredentialMetadata is what the vault tells about a credential: no value.
type CredentialMetadata struct {
	Name       string `json:"name"`
	SourceType string `json:"sourceType"`
	Revision   int64  `json:"revision"`
}

// AuthMetadata is a binding's auth without credentials.
type AuthMetadata struct {
	Type string  `json:"type"`
	Name *string `json:"name,omitempty"`
}

// BindingMetadata is what the vault tells about a binding.
type BindingMetadata struct {
	Name     string           `json:"name"`
	Revision int64            `json:"revision"`
	Match    *CredentialMatch `json:"match,omitempty"`
	Auth     *AuthMetadata    `json:"auth,omitempty"`
}

// CredentialVaultState is the sanitized vault.
type CredentialVaultState struct {
	Revision    int64                `json:"revision"`
	Credentials []CredentialMetadata `json:"credentials"`
	Bindings    []BindingMetadata    `json:"bindings"`
}

// UnsupportedError is an operation the sandbox cannot do at all.
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

// CredentialVault is the sandbox-local Credential Vault, on the sidecar.
type CredentialVault struct{ dp *DataPlane }

// CredentialVault returns the vault API, or an UnsupportedError for a
// template sandbox: the vault lives in the sidecar, which it does not have.
func (e *Egress) CredentialVault() (*CredentialVault, error) {
	if e.sidecar == nil {
		return nil, &UnsupportedError{Msg: fmt.Sprintf("Credential Vault needs the sandbox's egress sidecar, and sandbox %s was created from a template, which has none.", e.sandboxID)}
	}
	return &CredentialVault{dp: e.sidecar}, nil
}

func (v *CredentialVault) do(ctx context.Context, method, path string, body, out any) error {
	_, err := v.dp.Do(ctx, &Request{Method: method, Path: "/credential-vault" + path, JSON: body}, out)
	return err
}

// Create makes the vault (revision 1).
func (v *CredentialVault) Create(ctx context.Context, req *CredentialVaultCreate) (*CredentialVaultState, error) {
	var st CredentialVaultState
	return &st, v.do(ctx, http.MethodPost, "", req, &st)
}

// Get reads the sanitized vault.
func (v *CredentialVault) Get(ctx context.Context) (*CredentialVaultState, error) {
	var st CredentialVaultState
	return &st, v.do(ctx, http.MethodGet, "", nil, &st)
}

// Patch applies one atomic mutation.
func (v *CredentialVault) Patch(ctx context.Context, req *CredentialVaultPatch) (*CredentialVaultState, error) {
	var st CredentialVaultState
	return &st, v.do(ctx, http.MethodPatch, "", req, &st)
}

// Delete removes the vault.
func (v *CredentialVault) Delete(ctx context.Context) error {
	return v.do(ctx, http.MethodDelete, "", nil, nil)
}

// ListCredentials lists credential metadata.
func (v *CredentialVault) ListCredentials(ctx context.Context) ([]CredentialMetadata, error) {
	var out struct {
		Credentials []CredentialMetadata `json:"credentials"`
	}
	return out.Credentials, v.do(ctx, http.MethodGet, "/credentials", nil, &out)
}

// GetCredential reads one credential's metadata.
func (v *CredentialVault) GetCredential(ctx context.Context, name string) (*CredentialMetadata, error) {
	var c CredentialMetadata
	return &c, v.do(ctx, http.MethodGet, "/credentials/"+url.PathEscape(name), nil, &c)
}

// ListBindings lists binding metadata.
func (v *CredentialVault) ListBindings(ctx context.Context) ([]BindingMetadata, error) {
	var out struct {
		Bindings []BindingMetadata `json:"bindings"`
	}
	return out.Bindings, v.do(ctx, http.MethodGet, "/bindings", nil, &out)
}

// GetBinding reads one binding's metadata.
func (v *CredentialVault) GetBinding(ctx context.Context, name string) (*BindingMetadata, error) {
	var b BindingMetadata
	return &b, v.do(ctx, http.MethodGet, "/bindings/"+url.PathEscape(name), nil, &b)
}
