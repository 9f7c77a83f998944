package snapshot

import (
	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

// snapshotView is a snapshot as osb prints it: the official client's
// snake_case keys in its order, every key present (null when unset).
type snapshotView struct {
	ID        string             `json:"id"`
	SandboxID string             `json:"sandbox_id"`
	Name      *string            `json:"name"`
	Status    cmdutil.StatusView `json:"status"`
	CreatedAt *string            `json:"created_at"`
}

func newSnapshotView(s *client.Snapshot) snapshotView {
	return snapshotView{
		ID:        s.ID,
		SandboxID: s.SandboxID,
		Name:      s.Name,
		Status:    cmdutil.NewStatusView(s.Status),
		CreatedAt: cmdutil.Timestamp(s.CreatedAt),
	}
}

// record is the snapshot as a key/value table: status as its state, its
// reason and message last.
func (v snapshotView) record() output.Obj {
	o := output.Obj{
		{Key: "id", Value: v.ID},
		{Key: "sandbox_id", Value: v.SandboxID},
		{Key: "name", Value: cmdutil.Optional(v.Name)},
		{Key: "status", Value: v.Status.State},
		{Key: "created_at", Value: cmdutil.Optional(v.CreatedAt)},
	}
	return v.Status.AppendDetails(o)
}

// row is the snapshot as one line of the list table.
func (v snapshotView) row() output.Obj {
	return output.Obj{
		{Key: "id", Value: v.ID},
		{Key: "name", Value: cmdutil.Optional(v.Name)},
		{Key: "sandbox_id", Value: v.SandboxID},
		{Key: "status", Value: v.Status.State},
		{Key: "created_at", Value: cmdutil.Optional(v.CreatedAt)},
	}
}

// panel is what create prints.
func (v snapshotView) panel() output.Obj {
	return output.Obj{
		{Key: "id", Value: v.ID},
		{Key: "sandbox_id", Value: v.SandboxID},
		{Key: "name", Value: cmdutil.Optional(v.Name)},
		{Key: "status", Value: v.Status.State},
	}
}
