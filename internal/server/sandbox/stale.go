package sandbox

import (
	"fmt"
	"os"
)

// RemoveStale deletes the directory of a sandbox that no running server
// owns, one left behind when a server was killed before it could clean up.
// Like Remove it never deletes through a mount point.
func RemoveStale(dir string) error {
	if m := mountsUnder(dir); len(m) > 0 {
		return fmt.Errorf("refusing to remove %s, mounts remain: %v", dir, m)
	}
	// Its processes died with the server (the init's parent-death signal
	// ends the sandbox's pid namespace); its cgroup went with the next
	// server's start (see removeStaleCgroups).
	return os.RemoveAll(dir)
}
