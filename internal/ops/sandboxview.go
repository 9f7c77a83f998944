package ops

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/osb-dev/osb/internal/client"
)

// The views of a sandbox and of what its data plane reports, shared by the
// sandbox commands and the MCP tools (which return them as structured
// content): the official SDK's snake_case names, in its order, every key
// present (null when unset).

// SandboxView is a sandbox as osb shows it: the official SandboxInfo. The
// list table shows the tagged columns; a record table shows every key, the
// status as its state and the image as its reference.
type SandboxView struct {
	ID         string            `json:"id" table:"1"`
	Status     StatusView        `json:"status" table:"2"`
	Entrypoint []string          `json:"entrypoint"`
	ExpiresAt  *client.Time      `json:"expires_at" table:"5"`
	CreatedAt  *client.Time      `json:"created_at" table:"4"`
	Image      *ImageView        `json:"image" table:"3"`
	SnapshotID *string           `json:"snapshot_id"`
	Platform   *client.Platform  `json:"platform"`
	Allocation *AllocationView   `json:"allocation"`
	Metadata   map[string]string `json:"metadata"`
	Extensions map[string]string `json:"extensions"`
}

// ImageView is the image a sandbox runs.
type ImageView struct {
	Image string         `json:"image"`
	Auth  *ImageAuthView `json:"auth"`
}

// TableCell is the image reference.
func (v *ImageView) TableCell() any {
	if v == nil {
		return nil
	}
	return v.Image
}

// ImageAuthView keeps the key shape of registry credentials but masks the
// password: a script can see that auth is set and for whom, never the secret.
type ImageAuthView struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// MaskedPassword stands for a registry password in every view.
const MaskedPassword = "********"

// AllocationView is a sandbox's pool allocation.
type AllocationView struct {
	Mode    *string `json:"mode"`
	PoolRef *string `json:"pool_ref"`
	State   *string `json:"state"`
}

// NewSandboxView converts the wire sandbox.
func NewSandboxView(sb *client.Sandbox) SandboxView {
	v := SandboxView{
		ID:         sb.ID,
		Status:     NewStatusView(sb.Status),
		Entrypoint: sb.Entrypoint,
		ExpiresAt:  sb.ExpiresAt,
		CreatedAt:  sb.CreatedAt,
		SnapshotID: sb.SnapshotID,
		Platform:   sb.Platform,
		Metadata:   sb.Metadata,
		Extensions: sb.Extensions,
	}
	if v.Status.State == "" {
		// The official SDK's reading of a missing status.
		v.Status.State = "Unknown"
	}
	if sb.Image != nil {
		v.Image = &ImageView{Image: sb.Image.URI}
		if sb.Image.Auth != nil {
			v.Image.Auth = &ImageAuthView{Username: sb.Image.Auth.Username, Password: MaskedPassword}
		}
	}
	if a := sb.Allocation; a != nil {
		v.Allocation = &AllocationView{Mode: a.Mode, PoolRef: a.PoolRef, State: a.State}
	}
	return v
}

// MetricsView is a metrics sample under the official names. The official
// model types the four figures as floats, so a server's 2 prints as 2.0,
// whatever the value: a script never sees the type change with it.
type MetricsView struct {
	CPUCount   json.Number `json:"cpu_count"`
	CPUUsedPct json.Number `json:"cpu_used_percentage"`
	MemTotal   json.Number `json:"memory_total_in_mib"`
	MemUsed    json.Number `json:"memory_used_in_mib"`
	Timestamp  int64       `json:"timestamp"`
}

// NewMetricsView converts a wire sample.
func NewMetricsView(m *client.Metrics) MetricsView {
	return MetricsView{CPUCount: PyFloat(m.CPUCount), CPUUsedPct: PyFloat(m.CPUUsedPct),
		MemTotal: PyFloat(m.MemTotal), MemUsed: PyFloat(m.MemUsed), Timestamp: m.Timestamp}
}

// PyFloat writes a number as Python writes a float (repr, which json.dumps
// uses): the shortest digits that read back the same, with ".0" on a whole
// number, and an exponent below 1e-4 and from 1e16 on. A text that is not
// a number is kept as it came.
func PyFloat(n json.Number) json.Number {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return n
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if f != 0 && (exp < -4 || exp >= 16) {
		return json.Number(e)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return json.Number(s)
}

// EndpointView is where a sandbox port is reached; origin is null unless
// the server said where the sandbox came from.
type EndpointView struct {
	Endpoint string            `json:"endpoint"`
	Headers  map[string]string `json:"headers"`
	Origin   *string           `json:"origin"`
}

// NewEndpointView converts a wire endpoint.
func NewEndpointView(ep *client.Endpoint) EndpointView {
	v := EndpointView{Endpoint: ep.Endpoint, Headers: ep.Headers}
	if ep.Origin != "" {
		v.Origin = &ep.Origin
	}
	return v
}

// HealthView is whether a sandbox's execd answers.
type HealthView struct {
	SandboxID string `json:"sandbox_id"`
	Healthy   bool   `json:"healthy"`
}
