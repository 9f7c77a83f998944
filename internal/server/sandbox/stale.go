package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	return RemoveTree(dir)
}

// RemoveTree deletes dir and everything in it. A server without root is
// the owner, not root, of what its sandboxes wrote: a directory they made
// read-only (chmod 500) keeps its entries from it, so on failure it makes
// every directory of the tree its own to write, and tries again. (The
// sandbox is gone by then: nothing swaps a directory for a symlink under
// it, and WalkDir does not follow symlinks anyway.)
func RemoveTree(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil || os.Geteuid() == 0 {
		return err
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
