package sandbox

import (
	"fmt"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// sandboxView is a sandbox as osb prints it: the official client's snake_case
// SandboxInfo keys, in its order, every key present (null when unset). The
// list table shows the tagged columns; a record table shows every key, the
// status as its state and the image as its reference.
type sandboxView struct {
	ID         string             `json:"id" table:"1"`
	Status     cmdutil.StatusView `json:"status" table:"2"`
	Entrypoint []string           `json:"entrypoint"`
	ExpiresAt  *client.Time       `json:"expires_at" table:"5"`
	CreatedAt  *client.Time       `json:"created_at" table:"4"`
	Image      *imageView         `json:"image" table:"3"`
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

// TableCell is the image reference.
func (v *imageView) TableCell() any {
	if v == nil {
		return nil
	}
	return v.Image
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
		ExpiresAt:  sb.ExpiresAt,
		CreatedAt:  sb.CreatedAt,
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
