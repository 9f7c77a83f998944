package client

import (
	"context"
	"net/http"
	"net/url"
)

// Snapshot is a persistent capture of a sandbox. Unknown states are kept
// as strings.
type Snapshot struct {
	ID        string  `json:"id"`
	SandboxID string  `json:"sandboxId"`
	Name      *string `json:"name,omitempty"`
	Status    Status  `json:"status"`
	CreatedAt *Time   `json:"createdAt,omitempty"`
}

// Snapshot states a client waits for; others may appear.
const (
	SnapshotReady  = "Ready"
	SnapshotFailed = "Failed"
)

// SnapshotList is one page of snapshots.
type SnapshotList = Page[Snapshot]

// ListSnapshotsParams filters a listing; zero values are left out.
type ListSnapshotsParams struct {
	SandboxID string
	Name      *string // exact name; nil means any
	States    []string
	Page      int
	PageSize  int
}

func snapshotPath(id string) string { return "/snapshots/" + url.PathEscape(id) }

// CreateSnapshot asks for a snapshot of a running sandbox; name "" leaves it
// unnamed. The snapshot comes back Creating: poll GetSnapshot.
func (c *Client) CreateSnapshot(ctx context.Context, sandboxID, name string) (*Snapshot, error) {
	body := map[string]string{}
	if name != "" {
		body["name"] = name
	}
	var s Snapshot
	path := sandboxPath(sandboxID) + "/snapshots"
	_, err := c.Do(ctx, &Request{Method: http.MethodPost, Path: path, JSON: body}, &s)
	if err == nil && s.ID == "" {
		err = c.recordWithoutID("POST "+path, http.StatusAccepted, "a snapshot")
	}
	return &s, err
}

// GetSnapshot fetches one snapshot.
func (c *Client) GetSnapshot(ctx context.Context, id string) (*Snapshot, error) {
	var s Snapshot
	_, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: snapshotPath(id)}, &s)
	if err == nil && s.ID == "" {
		err = c.recordWithoutID("GET "+snapshotPath(id), http.StatusOK, "a snapshot")
	}
	return &s, err
}

// ListSnapshots fetches one page of snapshots.
func (c *Client) ListSnapshots(ctx context.Context, p ListSnapshotsParams) (*SnapshotList, error) {
	q := pageQuery(p.Page, p.PageSize)
	if p.SandboxID != "" {
		q.Set("sandboxId", p.SandboxID)
	}
	if p.Name != nil {
		q.Set("name", *p.Name)
	}
	for _, s := range p.States {
		q.Add("state", s)
	}
	var list SnapshotList
	_, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: "/snapshots", Query: q}, &list)
	return &list, err
}

// DeleteSnapshot deletes a snapshot (servers refuse while it is Creating).
func (c *Client) DeleteSnapshot(ctx context.Context, id string) error {
	_, err := c.Do(ctx, &Request{Method: http.MethodDelete, Path: snapshotPath(id)}, nil)
	return err
}
