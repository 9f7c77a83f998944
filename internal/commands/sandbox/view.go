package sandbox

import (
	"fmt"
	"time"

	"github.com/osb-dev/osb/internal/ops"
)

// listView is one page of sandboxes as printed.
type listView = ops.ListView[ops.SandboxView]

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
