package mcp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// registered is what sandbox_create and sandbox_connect return.
type registered struct {
	SandboxID string          `json:"sandbox_id"`
	Info      ops.SandboxView `json:"info"`
}

// status is the answer of tools that only act.
type status struct {
	Status string `json:"status"`
}

func sandboxTools() []toolSpec {
	return []toolSpec{
		{name: "sandbox_create", add: handler((*Server).createSandbox),
			desc: "Create a sandbox from a container image, wait until it is ready (unless skip_health_check), " +
				"and register it with this server so the other tools can use it. Returns its sandbox_id and info."},
		{name: "sandbox_connect", add: handler((*Server).connectSandbox),
			desc: "Register an existing sandbox with this server, after checking it is ready (unless " +
				"skip_health_check), so the other tools can use it. Returns its sandbox_id and info."},
		{name: "sandbox_kill", destructive: true, add: handler((*Server).killSandbox),
			desc: "Terminate a sandbox and forget it. Everything inside it is lost."},
		{name: "sandbox_get_info", readOnly: true, add: handler((*Server).sandboxInfo),
			desc: "Get a sandbox's state, image, metadata, creation and expiry times."},
		{name: "sandbox_list", readOnly: true, add: handler((*Server).listSandboxes),
			desc: "List sandboxes, one page at a time, optionally filtered by state and metadata."},
		{name: "sandbox_renew", add: handler((*Server).renewSandbox),
			desc: "Push a sandbox's expiry out: it will now expire timeout_seconds from now."},
		{name: "sandbox_get_metrics", readOnly: true, add: handler((*Server).sandboxMetrics),
			desc: "Get a sandbox's current CPU and memory use."},
		{name: "sandbox_healthcheck", readOnly: true, add: handler((*Server).healthcheck),
			desc: "Tell whether a sandbox answers (healthy true or false)."},
	}
}

type createArgs struct {
	Image               string            `json:"image" jsonschema:"Container image, e.g. \"python:3.11\"."`
	AuthUsername        *string           `json:"auth_username,omitempty" jsonschema:"User name for a private registry (with auth_password)."`
	AuthPassword        *string           `json:"auth_password,omitempty" jsonschema:"Password or token for a private registry (with auth_username)."`
	TimeoutSeconds      float64           `json:"timeout_seconds,omitempty" default:"600" jsonschema:"How long the sandbox lives before it is removed, in seconds."`
	ReadyTimeoutSeconds float64           `json:"ready_timeout_seconds,omitempty" default:"30" jsonschema:"How long to wait for the sandbox to become ready, in seconds."`
	PollMillis          int               `json:"health_check_polling_interval_ms,omitempty" default:"200" jsonschema:"How often readiness is checked, in milliseconds."`
	SkipHealthCheck     bool              `json:"skip_health_check,omitempty" jsonschema:"Return as soon as the sandbox is created, without waiting for it to be ready."`
	Env                 map[string]string `json:"env,omitempty" jsonschema:"Environment variables of the sandbox."`
	Metadata            map[string]string `json:"metadata,omitempty" jsonschema:"Labels to find the sandbox by later (sandbox_list filter)."`
	Resource            map[string]string `json:"resource,omitempty" jsonschema:"Resource limits, e.g. {\"cpu\": \"1\", \"memory\": \"2Gi\"} (the default)."`
	NetworkPolicy       *networkPolicy    `json:"network_policy,omitempty" jsonschema:"Outbound network rules; none means no restriction."`
	Extensions          map[string]string `json:"extensions,omitempty" jsonschema:"Server-specific settings, passed through unchanged."`
	Entrypoint          []string          `json:"entrypoint,omitempty" jsonschema:"The sandbox's main process (default [\"tail\", \"-f\", \"/dev/null\"])."`
}

// networkPolicy is client.NetworkPolicy as sandbox_create takes it.
type networkPolicy struct {
	DefaultAction *string `json:"defaultAction,omitempty" enum:"allow,deny" default:"deny" jsonschema:"What happens to a host that no rule matches."`
	Egress        []struct {
		Action string `json:"action" enum:"allow,deny" jsonschema:"allow or deny the hosts that match target."`
		Target string `json:"target" jsonschema:"A host name or a wildcard such as \"*.example.com\"."`
	} `json:"egress,omitempty" jsonschema:"Rules, first match wins."`
}

func (p *networkPolicy) policy() *client.NetworkPolicy {
	if p == nil {
		return nil
	}
	out := &client.NetworkPolicy{DefaultAction: p.DefaultAction, Egress: []client.NetworkRule{}}
	for _, r := range p.Egress {
		out.Egress = append(out.Egress, client.NetworkRule(r))
	}
	return out
}

func newReadiness(timeoutSeconds float64, pollMillis int, skip bool) (ops.Readiness, error) {
	r := ops.Readiness{Timeout: seconds(timeoutSeconds), Poll: time.Duration(pollMillis) * time.Millisecond, Skip: skip}
	if !skip && (r.Timeout <= 0 || r.Poll <= 0) {
		return r, usage("the readiness timeout and the health check polling interval must be positive")
	}
	return r, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// body is the CreateSandboxRequest sent for sandbox_create.
func (a createArgs) body() (*client.CreateSandboxRequest, error) {
	hasUser, hasPass := a.AuthUsername != nil && *a.AuthUsername != "", a.AuthPassword != nil && *a.AuthPassword != ""
	if hasUser != hasPass {
		return nil, usage("auth_username and auth_password go together: give both or neither")
	}
	if a.Image == "" {
		return nil, usage("image must not be empty")
	}
	timeout := int64(a.TimeoutSeconds)
	b := &client.CreateSandboxRequest{
		Image:          &client.ImageSpec{URI: a.Image},
		Timeout:        &timeout,
		ResourceLimits: a.Resource,
		Env:            a.Env,
		Metadata:       a.Metadata,
		Extensions:     a.Extensions,
		Entrypoint:     a.Entrypoint,
		NetworkPolicy:  a.NetworkPolicy.policy(),
	}
	if hasUser {
		b.Image.Auth = &client.ImageAuth{Username: *a.AuthUsername, Password: *a.AuthPassword}
	}
	// The official SDK's defaults for the workload shape.
	if len(b.ResourceLimits) == 0 {
		b.ResourceLimits = map[string]string{"cpu": "1", "memory": "2Gi"}
	}
	if len(b.Entrypoint) == 0 {
		b.Entrypoint = []string{"tail", "-f", "/dev/null"}
	}
	return b, nil
}

func (s *Server) createSandbox(ctx context.Context, req *mcp.CallToolRequest, a createArgs) (*registered, error) {
	p := newProgress(req)
	body, err := a.body()
	if err != nil {
		return nil, err
	}
	ready, err := newReadiness(a.ReadyTimeoutSeconds, a.PollMillis, a.SkipHealthCheck)
	if err != nil {
		return nil, err
	}
	// As the official SDK does: a sandbox that never became ready is not
	// left running.
	sb, err := ops.Create(ctx, s.c, body, ready, func(msg string) { p.report(ctx, msg) })
	if err != nil {
		return nil, err
	}
	s.registered.Store(sb.ID, true)
	return s.describe(ctx, sb.ID)
}

// describe fetches a registered sandbox's info.
func (s *Server) describe(ctx context.Context, id string) (*registered, error) {
	sb, err := s.c.GetSandbox(ctx, id)
	if err != nil {
		return nil, err
	}
	return &registered{SandboxID: sb.ID, Info: ops.NewSandboxView(sb)}, nil
}

type connectArgs struct {
	SandboxID             string  `json:"sandbox_id" jsonschema:"Id of an existing sandbox (a unique prefix is enough)."`
	ConnectTimeoutSeconds float64 `json:"connect_timeout_seconds,omitempty" default:"30" jsonschema:"How long to wait for the sandbox to be ready, in seconds."`
	PollMillis            int     `json:"health_check_polling_interval_ms,omitempty" default:"200" jsonschema:"How often readiness is checked, in milliseconds."`
	SkipHealthCheck       bool    `json:"skip_health_check,omitempty" jsonschema:"Register the sandbox without waiting for it to be ready."`
}

func (s *Server) connectSandbox(ctx context.Context, _ *mcp.CallToolRequest, a connectArgs) (*registered, error) {
	ready, err := newReadiness(a.ConnectTimeoutSeconds, a.PollMillis, a.SkipHealthCheck)
	if err != nil {
		return nil, err
	}
	id, err := s.connect(ctx, a.SandboxID, ready)
	if err != nil {
		return nil, err
	}
	return s.describe(ctx, id)
}

// connect finds the sandbox named by id (or a unique prefix of it), waits
// for it as r says, registers it and returns its full id.
func (s *Server) connect(ctx context.Context, id string, r ops.Readiness) (string, error) {
	sb, err := s.sandbox(ctx, id)
	if err != nil {
		return "", err
	}
	if err := ops.WaitReady(ctx, s.c, sb.ID, r); err != nil {
		return "", err
	}
	s.registered.Store(sb.ID, true)
	return sb.ID, nil
}

// sandbox fetches the sandbox named by id or a unique prefix of it.
func (s *Server) sandbox(ctx context.Context, id string) (*client.Sandbox, error) {
	var sb *client.Sandbox
	err := ops.WithSandboxID(ctx, s.c, id, func(cand string) (err error) {
		sb, err = s.c.GetSandbox(ctx, cand)
		return err
	})
	return sb, err
}

// defaultReadiness is how a sandbox is connected to on first use: the
// official SDK's connect defaults.
var defaultReadiness = ops.Readiness{Timeout: 30 * time.Second, Poll: ops.ReadyPoll}

// target is the sandbox a gated tool acts on: the arguments every such
// tool takes.
type target struct {
	sandboxArgs
	ConnectIfMissing bool `json:"connect_if_missing,omitempty" jsonschema:"When the sandbox is not registered with this server yet, connect to it (and register it) instead of failing."`
}

// admit returns the full id of a sandbox a gated tool may act on: one this
// server registered, or, when the caller asked for it or --allow-any-sandbox
// is on, one it connects to now.
func (s *Server) admit(ctx context.Context, t target) (string, error) {
	id := t.SandboxID
	if id == "" {
		return "", usage("sandbox_id must not be empty")
	}
	if _, ok := s.registered.Load(id); ok {
		return id, nil
	}
	if !t.ConnectIfMissing && !s.opts.AllowAnySandbox {
		return "", &ops.ExitError{Code: ops.ExitUsage, Err: &notRegisteredError{id: id}}
	}
	return s.connect(ctx, id, defaultReadiness)
}

// execd resolves the data plane of a sandbox the registry admits.
func (s *Server) execd(ctx context.Context, t target) (*client.DataPlane, error) {
	full, err := s.admit(ctx, t)
	if err != nil {
		return nil, err
	}
	return s.c.DataPlane(ctx, full, client.PortExecd)
}

// act runs op on the data plane of the sandbox t names; done is the
// answer's status.
func (s *Server) act(ctx context.Context, t target, done string, op func(*client.DataPlane) error) (*status, error) {
	dp, err := s.execd(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := op(dp); err != nil {
		return nil, err
	}
	return &status{Status: done}, nil
}

// notRegisteredError is a tool call on a sandbox this server does not know.
type notRegisteredError struct{ id string }

func (e *notRegisteredError) Error() string {
	return fmt.Sprintf("sandbox %q is not registered with this MCP server: create one with sandbox_create, "+
		"or attach to an existing one with sandbox_connect, then call this tool again "+
		"(or pass connect_if_missing: true to connect on the way)", e.id)
}

// The official server lets sandbox_kill, sandbox_get_info and sandbox_renew
// act on any sandbox, registered or not; so does osb.

func (s *Server) killSandbox(ctx context.Context, _ *mcp.CallToolRequest, a sandboxArgs) (*status, error) {
	err := ops.WithSandboxID(ctx, s.c, a.SandboxID, func(id string) error {
		s.registered.Delete(id)
		return s.c.DeleteSandbox(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	return &status{Status: "killed"}, nil
}

func (s *Server) sandboxInfo(ctx context.Context, _ *mcp.CallToolRequest, a sandboxArgs) (*ops.SandboxView, error) {
	sb, err := s.sandbox(ctx, a.SandboxID)
	if err != nil {
		return nil, err
	}
	info := ops.NewSandboxView(sb)
	return &info, nil
}

type listArgs struct {
	Filter *struct {
		States   []string          `json:"states,omitempty" jsonschema:"Only sandboxes in these states (e.g. \"Running\", \"Paused\")."`
		Metadata map[string]string `json:"metadata,omitempty" jsonschema:"Only sandboxes with all these metadata labels."`
		Page     *int              `json:"page,omitempty" jsonschema:"Page number, from 1."`
		PageSize *int              `json:"page_size,omitempty" jsonschema:"Sandboxes per page."`
	} `json:"filter,omitempty" jsonschema:"Which sandboxes to list; none lists the first page of all."`
}

type sandboxPage struct {
	SandboxInfos []ops.SandboxView  `json:"sandbox_infos"`
	Pagination   ops.PaginationView `json:"pagination"`
}

func (s *Server) listSandboxes(ctx context.Context, _ *mcp.CallToolRequest, a listArgs) (*sandboxPage, error) {
	var p client.ListSandboxesParams
	if f := a.Filter; f != nil {
		p.States = f.States
		for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
			p.Metadata = append(p.Metadata, [2]string{k, f.Metadata[k]})
		}
		if f.Page != nil {
			p.Page = *f.Page
		}
		if f.PageSize != nil {
			p.PageSize = *f.PageSize
		}
	}
	page, err := s.c.ListSandboxes(ctx, p)
	if err != nil {
		return nil, err
	}
	list := ops.NewListView(page, ops.NewSandboxView)
	return &sandboxPage{SandboxInfos: list.Items, Pagination: list.Pagination}, nil
}

type renewArgs struct {
	sandboxArgs
	TimeoutSeconds float64 `json:"timeout_seconds" jsonschema:"The sandbox will expire this many seconds from now."`
}

// renewed is the official SDK's SandboxRenewResponse.
type renewed struct {
	ExpiresAt client.Time `json:"expires_at"`
}

func (s *Server) renewSandbox(ctx context.Context, _ *mcp.CallToolRequest, a renewArgs) (*renewed, error) {
	if a.TimeoutSeconds <= 0 {
		return nil, usage("timeout_seconds must be positive")
	}
	var out renewed
	err := ops.WithSandboxID(ctx, s.c, a.SandboxID, func(id string) error {
		at := time.Now().Add(seconds(a.TimeoutSeconds))
		got, err := s.c.RenewSandbox(ctx, id, at)
		out.ExpiresAt = got
		if got.IsZero() {
			// A server that answers without the time: the one asked for.
			out.ExpiresAt = client.NewTime(at)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func (s *Server) sandboxMetrics(ctx context.Context, _ *mcp.CallToolRequest, a target) (*ops.MetricsView, error) {
	dp, err := s.execd(ctx, a)
	if err != nil {
		return nil, err
	}
	m, err := dp.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	v := ops.NewMetricsView(m)
	return &v, nil
}

// healthcheck answers false, not an error, when the sandbox does not
// answer: that is the question asked.
func (s *Server) healthcheck(ctx context.Context, _ *mcp.CallToolRequest, a target) (*ops.HealthView, error) {
	full, err := s.admit(ctx, a)
	if err != nil {
		return nil, err
	}
	dp, err := s.c.DataPlane(ctx, full, client.PortExecd)
	if err == nil {
		err = dp.Ping(ctx)
	}
	return &ops.HealthView{SandboxID: full, Healthy: err == nil}, nil
}
