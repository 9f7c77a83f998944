package client

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sandbox is the lifecycle API's view of a sandbox (wire names are camelCase).
// Unknown fields are ignored and unknown states kept as strings.
type Sandbox struct {
	ID         string            `json:"id"`
	Status     Status            `json:"status"`
	Image      *ImageSpec        `json:"image,omitempty"`
	SnapshotID *string           `json:"snapshotId,omitempty"`
	Entrypoint []string          `json:"entrypoint"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Extensions map[string]string `json:"extensions,omitempty"`
	Platform   *Platform         `json:"platform,omitempty"`
	Allocation *Allocation       `json:"allocation,omitempty"`
	CreatedAt  *Time             `json:"createdAt,omitempty"`
	ExpiresAt  *Time             `json:"expiresAt,omitempty"`
}

// Status is the state of a sandbox or a snapshot, with why it is in it.
type Status struct {
	State            string  `json:"state"`
	Reason           *string `json:"reason,omitempty"`
	Message          *string `json:"message,omitempty"`
	LastTransitionAt *Time   `json:"lastTransitionAt,omitempty"`
}

// ImageSpec names a container image and, for private registries, credentials.
type ImageSpec struct {
	URI  string     `json:"uri"`
	Auth *ImageAuth `json:"auth,omitempty"`
}

// ImageAuth holds registry credentials; never printed.
type ImageAuth struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Platform is the OS and architecture a sandbox runs on.
type Platform struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

// Allocation says how a pooled sandbox was obtained.
type Allocation struct {
	Mode    *string `json:"mode,omitempty"`
	PoolRef *string `json:"poolRef,omitempty"`
	State   *string `json:"state,omitempty"`
}

// Pagination is the page information of every list response.
type Pagination struct {
	Page        int  `json:"page"`
	PageSize    int  `json:"pageSize"`
	TotalItems  int  `json:"totalItems"`
	TotalPages  int  `json:"totalPages"`
	HasNextPage bool `json:"hasNextPage"`
}

// Page is one page of a list response.
type Page[T any] struct {
	Items      []T        `json:"items"`
	Pagination Pagination `json:"pagination"`
}

// SandboxList is one page of sandboxes.
type SandboxList = Page[Sandbox]

// ListSandboxesParams filters a listing; zero values are left out.
type ListSandboxesParams struct {
	States   []string
	Metadata [][2]string // ordered key/value pairs
	Page     int
	PageSize int
}

// Endpoint is where a port of a sandbox can be reached. Endpoint has no
// scheme and may carry a path; Headers must accompany every request to it.
type Endpoint struct {
	Endpoint string            `json:"endpoint"`
	Headers  map[string]string `json:"headers"`
	Origin   string            `json:"-"` // the OPEN-SANDBOX-ORIGIN response header
}

// MaxPageSize is the largest page the server accepts.
const MaxPageSize = 200

// pageQuery holds page and pageSize when they are set.
func pageQuery(page, pageSize int) url.Values {
	q := url.Values{}
	if page > 0 {
		q.Set("page", strconv.Itoa(page))
	}
	if pageSize > 0 {
		q.Set("pageSize", strconv.Itoa(pageSize))
	}
	return q
}

func sandboxPath(id string) string { return "/sandboxes/" + url.PathEscape(id) }

// CreateSandboxRequest is the body of POST /sandboxes (wire names). Timeout
// is always sent: seconds, or null for a sandbox kept until it is killed.
// Lifecycle and volumes are passed on as the request file has them.
type CreateSandboxRequest struct {
	Image            *ImageSpec        `json:"image,omitempty"`
	TemplateID       string            `json:"templateId,omitempty"`
	SnapshotID       string            `json:"snapshotId,omitempty"`
	Platform         *Platform         `json:"platform,omitempty"`
	Timeout          *int64            `json:"timeout"`
	ResourceLimits   map[string]string `json:"resourceLimits,omitempty"`
	ResourceRequests map[string]string `json:"resourceRequests,omitempty"`
	Env              map[string]string `json:"env,omitempty"`
	Metadata         map[string]string `json:"metadata,omitempty"`
	Lifecycle        map[string]any    `json:"lifecycle,omitempty"`
	Entrypoint       []string          `json:"entrypoint,omitempty"`
	NetworkPolicy    *NetworkPolicy    `json:"networkPolicy,omitempty"`
	CredentialProxy  *CredentialProxy  `json:"credentialProxy,omitempty"`
	SecureAccess     *bool             `json:"secureAccess,omitempty"`
	Volumes          []map[string]any  `json:"volumes,omitempty"`
	Extensions       map[string]string `json:"extensions,omitempty"`
}

// CredentialProxy turns Credential Vault injection on for a new sandbox.
type CredentialProxy struct {
	Enabled bool `json:"enabled"`
}

// CreateSandbox posts a CreateSandboxRequest.
func (c *Client) CreateSandbox(ctx context.Context, body *CreateSandboxRequest) (*Sandbox, error) {
	var sb Sandbox
	_, err := c.Do(ctx, &Request{Method: http.MethodPost, Path: "/sandboxes", JSON: body}, &sb)
	if err == nil && sb.ID == "" {
		// Nothing can be done with it, not even deleting it again.
		err = c.recordWithoutID("POST /sandboxes", http.StatusAccepted, "a sandbox")
	}
	return &sb, err
}

// GetSandbox fetches one sandbox.
func (c *Client) GetSandbox(ctx context.Context, id string) (*Sandbox, error) {
	var sb Sandbox
	_, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: sandboxPath(id)}, &sb)
	if err == nil && sb.ID == "" {
		err = c.recordWithoutID("GET "+sandboxPath(id), http.StatusOK, "a sandbox")
	}
	return &sb, err
}

// recordWithoutID reports a record with no id where one of what (a
// sandbox, a template, a snapshot) was expected: another object, such as a
// listing, or an empty one. Printed, it would be a blank record.
func (c *Client) recordWithoutID(request string, status int, what string) error {
	method, path, _ := strings.Cut(request, " ")
	return &BadResponseError{What: method + " " + c.addr.display + path, Status: status, Reason: "a record without an id where " + what + " was expected"}
}

// ListSandboxes fetches one page.
func (c *Client) ListSandboxes(ctx context.Context, p ListSandboxesParams) (*SandboxList, error) {
	raw := pageBuffers.Get().(*bytes.Buffer)
	defer pageBuffers.Put(raw)
	if err := c.listSandboxesRaw(ctx, p, raw); err != nil {
		return nil, err
	}
	return c.ReadSandboxList(raw.Bytes())
}

// listSandboxesRaw fetches one page into raw, as the server sent it.
func (c *Client) listSandboxesRaw(ctx context.Context, p ListSandboxesParams, raw *bytes.Buffer) error {
	q := pageQuery(p.Page, p.PageSize)
	for _, s := range p.States {
		q.Add("state", s)
	}
	if len(p.Metadata) > 0 {
		q.Set("metadata", EncodeMetadataFilter(p.Metadata))
	}
	raw.Reset()
	_, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: "/sandboxes", Query: q}, raw)
	return err
}

// ReadSandboxList reads one page of a sandbox listing as the server sent
// it; a body that is no such page is a BadResponseError.
func (c *Client) ReadSandboxList(raw []byte) (*SandboxList, error) {
	list, err := parseSandboxList(raw)
	if err != nil {
		return nil, &BadResponseError{What: "GET " + c.addr.display + "/sandboxes", Status: http.StatusOK, Reason: err.Error()}
	}
	return list, nil
}

// pageBuffers hold list pages while they are read (what is read from them
// keeps nothing of them): a walk over every page reuses a few.
var pageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// WalkSandboxes calls fn with every page of a listing, in pages as large as
// the server allows (see WalkPages).
func (c *Client) WalkSandboxes(ctx context.Context, p ListSandboxesParams, fn func(*SandboxList) error) error {
	return WalkSandboxPages(ctx, c, p, c.ReadSandboxList, func(sb *Sandbox) string { return sb.ID }, fn)
}

// WalkSandboxPages is WalkSandboxes with each page read by read, from the
// bytes the server sent (which read must not keep), into records of its
// own; id names a record (see WalkPages).
func WalkSandboxPages[T any](ctx context.Context, c *Client, p ListSandboxesParams, read func(raw []byte) (*Page[T], error), id func(*T) string, fn func(*Page[T]) error) error {
	p.PageSize = MaxPageSize
	fetch := func(ctx context.Context, page int) (*Page[T], error) {
		q := p
		q.Page = page
		raw := pageBuffers.Get().(*bytes.Buffer)
		defer pageBuffers.Put(raw)
		if err := c.listSandboxesRaw(ctx, q, raw); err != nil {
			return nil, err
		}
		return read(raw.Bytes())
	}
	return WalkPages(ctx, fetch, id, fn)
}

// EncodeMetadataFilter builds the one `metadata` query value: each key and
// value percent-encoded twice, as the official client does, then joined as
// k=v&k2=v2 (the query encoder adds the outer layer).
func EncodeMetadataFilter(pairs [][2]string) string {
	s := ""
	for i, kv := range pairs {
		if i > 0 {
			s += "&"
		}
		s += quoteTwice(kv[0]) + "=" + quoteTwice(kv[1])
	}
	return s
}

func quoteTwice(s string) string { return quoteAll(quoteAll(s)) }

// quoteAll percent-encodes every byte but the unreserved ones, like Python's quote(s, safe="").
func quoteAll(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || strings.IndexByte("_.-~", ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[ch>>4])
		b.WriteByte(hex[ch&15])
	}
	return b.String()
}

// DeleteSandbox kills a sandbox.
func (c *Client) DeleteSandbox(ctx context.Context, id string) error {
	_, err := c.Do(ctx, &Request{Method: http.MethodDelete, Path: sandboxPath(id)}, nil)
	return err
}

// PauseSandbox asks for a pause; it completes asynchronously.
func (c *Client) PauseSandbox(ctx context.Context, id string) error {
	_, err := c.Do(ctx, &Request{Method: http.MethodPost, Path: sandboxPath(id) + "/pause"}, nil)
	return err
}

// ResumeSandbox asks for a paused sandbox to run again.
func (c *Client) ResumeSandbox(ctx context.Context, id string) error {
	_, err := c.Do(ctx, &Request{Method: http.MethodPost, Path: sandboxPath(id) + "/resume"}, nil)
	c.ForgetEndpoints(id)
	return err
}

// RenewSandbox sets a new absolute expiry time and returns the one the
// server kept (zero when it said none).
func (c *Client) RenewSandbox(ctx context.Context, id string, at time.Time) (Time, error) {
	var out struct {
		ExpiresAt Time `json:"expiresAt"`
	}
	body := map[string]string{"expiresAt": at.UTC().Format(time.RFC3339Nano)}
	_, err := c.Do(ctx, &Request{Method: http.MethodPost, Path: sandboxPath(id) + "/renew-expiration", JSON: body}, &out)
	return out.ExpiresAt, err
}

type endpointKey struct {
	id    string
	port  int
	proxy bool
}

// GetEndpoint resolves where a sandbox port can be reached, once per process.
func (c *Client) GetEndpoint(ctx context.Context, id string, port int) (*Endpoint, error) {
	key := endpointKey{id, port, c.opts.UseServerProxy}
	if ep, ok := c.endpoints.Load(key); ok {
		return ep.(*Endpoint), nil
	}
	q := url.Values{"use_server_proxy": {strconv.FormatBool(c.opts.UseServerProxy)}}
	var ep Endpoint
	h, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: fmt.Sprintf("%s/endpoints/%d", sandboxPath(id), port), Query: q}, &ep)
	if err != nil {
		return nil, err
	}
	ep.Origin = h.Get("OPEN-SANDBOX-ORIGIN")
	if ep.Headers == nil {
		ep.Headers = map[string]string{}
	}
	c.endpoints.Store(key, &ep)
	return &ep, nil
}

// ForgetEndpoints drops cached endpoints of a sandbox (they may move on resume).
func (c *Client) ForgetEndpoints(id string) {
	c.endpoints.Range(func(k, _ any) bool {
		if k.(endpointKey).id == id {
			c.endpoints.Delete(k)
		}
		return true
	})
}

// ServerVersion asks the lifecycle server for its version (GET /version).
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	var out struct {
		Version string `json:"version"`
	}
	_, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: "/version"}, &out)
	return out.Version, err
}
