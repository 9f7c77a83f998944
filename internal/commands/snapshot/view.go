package snapshot

import (
	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

// snapshotView is a snapshot as osb prints it: the official client's
// snake_case keys in its order, every key present (null when unset).
type snapshotView struct {
	ID        string     `json:"id"`
	SandboxID string     `json:"sandbox_id"`
	Name      *string    `json:"name"`
	Status    statusView `json:"status"`
	CreatedAt *string    `json:"created_at"`
}

type statusView struct {
	State            string  `json:"state"`
	Reason           *string `json:"reason"`
	Message          *string `json:"message"`
	LastTransitionAt *string `json:"last_transition_at"`
}

type listView struct {
	Items      []snapshotView         `json:"items"`
	Pagination cmdutil.PaginationView `json:"pagination"`
}

func newSnapshotView(s *client.Snapshot) snapshotView {
	return snapshotView{
		ID:        s.ID,
		SandboxID: s.SandboxID,
		Name:      s.Name,
		Status: statusView{State: s.Status.State, Reason: s.Status.Reason, Message: s.Status.Message,
			LastTransitionAt: cmdutil.Timestamp(s.Status.LastTransitionAt)},
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
	if r := v.Status.Reason; r != nil && *r != "" {
		o = append(o, output.KV{Key: "status_reason", Value: *r})
	}
	if m := v.Status.Message; m != nil && *m != "" {
		o = append(o, output.KV{Key: "status_message", Value: *m})
	}
	return o
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
