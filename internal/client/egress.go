package client

import (
	"context"
	"net/http"
)

// OriginTemplate is the OPEN-SANDBOX-ORIGIN of sandboxes created from a
// template. They have no egress sidecar: their policy lives on the
// lifecycle server (/sandboxes/{id}/networkpolicy) and they have no
// Credential Vault.
const OriginTemplate = "template"

// NetworkRule allows or denies one target (example.com, *.example.com).
type NetworkRule struct {
	Action string `json:"action"`
	Target string `json:"target"`
}

// NetworkPolicy is a sandbox's egress policy (wire names).
type NetworkPolicy struct {
	DefaultAction *string       `json:"defaultAction,omitempty"`
	Egress        []NetworkRule `json:"egress"`
}

// PolicyStatus is the answer of every policy call. EnforcementMode says
// what the server really enforces ("none" on a local osb server); Policy
// is only set on reads.
type PolicyStatus struct {
	Status          string         `json:"status"`
	Mode            string         `json:"mode"`
	EnforcementMode string         `json:"enforcementMode"`
	Reason          string         `json:"reason"`
	Policy          *NetworkPolicy `json:"policy"`
}

// Egress is the runtime egress API of one sandbox: its sidecar (port
// 18080), or the lifecycle server for a template sandbox, which has none.
type Egress struct {
	c         *Client
	sandboxID string
	sidecar   *DataPlane // nil for a template sandbox
}

// Egress connects to a sandbox's egress API the way the official SDK does:
// the execd endpoint says where the sandbox came from; only a sandbox not
// created from a template has a sidecar endpoint to resolve.
func (c *Client) Egress(ctx context.Context, sandboxID string) (*Egress, error) {
	ep, err := c.GetEndpoint(ctx, sandboxID, PortExecd)
	if err != nil {
		return nil, err
	}
	e := &Egress{c: c, sandboxID: sandboxID}
	if ep.Origin == OriginTemplate {
		return e, nil
	}
	e.sidecar, err = c.DataPlane(ctx, sandboxID, PortEgress)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// SandboxID is the (full) id of the sandbox.
func (e *Egress) SandboxID() string { return e.sandboxID }

// policy sends one /policy call to the sidecar, or the same call to the
// lifecycle server's networkpolicy route.
func (e *Egress) policy(ctx context.Context, method string, body any) (*PolicyStatus, error) {
	var st PolicyStatus
	var err error
	if e.sidecar != nil {
		_, err = e.sidecar.Do(ctx, &Request{Method: method, Path: "/policy", JSON: body}, &st)
	} else {
		_, err = e.c.Do(ctx, &Request{Method: method, Path: sandboxPath(e.sandboxID) + "/networkpolicy", JSON: body}, &st)
	}
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// GetPolicy reads the current policy.
func (e *Egress) GetPolicy(ctx context.Context) (*PolicyStatus, error) {
	return e.policy(ctx, http.MethodGet, nil)
}

// PatchRules merges rules into the policy: a rule replaces the one for its
// target, other rules stay, the default action is kept.
func (e *Egress) PatchRules(ctx context.Context, rules []NetworkRule) (*PolicyStatus, error) {
	return e.policy(ctx, http.MethodPatch, rules)
}

// DeleteRules removes the rules for targets; unknown targets are ignored.
// The targets travel as a JSON body of the DELETE, as the contract says.
func (e *Egress) DeleteRules(ctx context.Context, targets []string) (*PolicyStatus, error) {
	return e.policy(ctx, http.MethodDelete, targets)
}
