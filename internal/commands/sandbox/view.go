package sandbox

import (
	"fmt"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

// sandboxView is a sandbox as osb prints it: the official client's snake_case
// SandboxInfo keys, in its order, every key present (null when unset).
type sandboxView struct {
	ID         string             `json:"id"`
	Status     cmdutil.StatusView `json:"status"`
	Entrypoint []string           `json:"entrypoint"`
	ExpiresAt  *string            `json:"expires_at"`
	CreatedAt  *string            `json:"created_at"`
	Image      *imageView         `json:"image"`
	SnapshotID *string            `json:"snapshot_id"`
	Platform   *platformView      `json:"platform"`
	Allocation *allocationView    `json:"allocation"`
	Metadata   map[string]string  `json:"metadata"`
	Extensions map[string]string  `json:"extensions"`
}

type imageView struct {
	Image string         `json:"image"`
	Auth  *imageAuthView `json:"auth"`
}

// imageAuthView keeps the key shape of registry credentials but masks the
// password: a script can see that auth is set and for whom, never the secret.
type imageAuthView struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

const maskedPassword = "********"

type platformView struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

type allocationView struct {
	Mode    *string `json:"mode"`
	PoolRef *string `json:"pool_ref"`
	State   *string `json:"state"`
}

// listView is one page of sandboxes as printed.
type listView = cmdutil.ListView[sandboxView]

func newSandboxView(sb *client.Sandbox) sandboxView {
	v := sandboxView{
		ID:         sb.ID,
		Status:     cmdutil.NewStatusView(sb.Status),
		Entrypoint: sb.Entrypoint,
		ExpiresAt:  cmdutil.Timestamp(sb.ExpiresAt),
		CreatedAt:  cmdutil.Timestamp(sb.CreatedAt),
		SnapshotID: sb.SnapshotID,
		Metadata:   sb.Metadata,
		Extensions: sb.Extensions,
	}
	if v.Status.State == "" {
		// The official SDK's reading of a missing status.
		v.Status.State = "Unknown"
	}
	if sb.Image != nil {
		v.Image = &imageView{Image: sb.Image.URI}
		if sb.Image.Auth != nil {
			v.Image.Auth = &imageAuthView{Username: sb.Image.Auth.Username, Password: maskedPassword}
		}
	}
	if sb.Platform != nil {
		v.Platform = &platformView{OS: sb.Platform.OS, Arch: sb.Platform.Arch}
	}
	if a := sb.Allocation; a != nil {
		v.Allocation = &allocationView{Mode: a.Mode, PoolRef: a.PoolRef, State: a.State}
	}
	return v
}

// row is the sandbox as one table row: status and image flattened.
func (v sandboxView) row() output.Obj {
	return output.Obj{
		{Key: "id", Value: v.ID},
		{Key: "status", Value: v.Status.State},
		{Key: "image", Value: v.imageURI()},
		{Key: "created_at", Value: cmdutil.Optional(v.CreatedAt)},
		{Key: "expires_at", Value: cmdutil.Optional(v.ExpiresAt)},
	}
}

// record is the sandbox as a key/value table: every key of the JSON view,
// status as its state and image as its reference, the status details last.
func (v sandboxView) record() output.Obj {
	o := output.Obj{
		{Key: "id", Value: v.ID},
		{Key: "status", Value: v.Status.State},
		{Key: "entrypoint", Value: v.Entrypoint},
		{Key: "expires_at", Value: cmdutil.Optional(v.ExpiresAt)},
		{Key: "created_at", Value: cmdutil.Optional(v.CreatedAt)},
		{Key: "image", Value: v.imageURI()},
		{Key: "snapshot_id", Value: cmdutil.Optional(v.SnapshotID)},
		{Key: "platform", Value: cmdutil.Optional(v.Platform)},
		{Key: "allocation", Value: cmdutil.Optional(v.Allocation)},
		{Key: "metadata", Value: cmdutil.OptionalMap(v.Metadata)},
		{Key: "extensions", Value: cmdutil.OptionalMap(v.Extensions)},
	}
	return v.Status.AppendDetails(o)
}

func (v sandboxView) imageURI() any {
	if v.Image == nil {
		return nil
	}
	return v.Image.Image
}

// Ways the create panel shows a timeout, as the official client does.
const (
	timeoutSDKDefault    = "sdk-default"
	timeoutManualCleanup = "manual-cleanup"
)

// pythonDuration renders d like Python's str(timedelta), which the official
// client prints and scripts may compare: 0:30:00, 1 day, 2:00:00.
func pythonDuration(d time.Duration) string {
	secs := int64(d / time.Second)
	days, secs := secs/86400, secs%86400
	hms := fmt.Sprintf("%d:%02d:%02d", secs/3600, secs/60%60, secs%60)
	switch days {
	case 0:
		return hms
	case 1:
		return "1 day, " + hms
	}
	return fmt.Sprintf("%d days, %s", days, hms)
}
