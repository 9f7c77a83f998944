package snapshot

import (
	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// snapshotView is a snapshot as osb prints it: the official client's
// snake_case keys in its order, every key present (null when unset).
type snapshotView struct {
	ID        string         `json:"id" table:"1"`
	SandboxID string         `json:"sandbox_id" table:"3"`
	Name      *string        `json:"name" table:"2"`
	Status    ops.StatusView `json:"status" table:"4"`
	CreatedAt *client.Time   `json:"created_at" table:"5"`
}

func newSnapshotView(s *client.Snapshot) snapshotView {
	return snapshotView{
		ID:        s.ID,
		SandboxID: s.SandboxID,
		Name:      s.Name,
		Status:    ops.NewStatusView(s.Status),
		CreatedAt: s.CreatedAt,
	}
}

// createdView is what create prints.
type createdView struct {
	ID        string  `json:"id"`
	SandboxID string  `json:"sandbox_id"`
	Name      *string `json:"name"`
	Status    string  `json:"status"`
}
