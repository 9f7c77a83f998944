//go:build unix

package cmdtest

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockBuild waits until no other test binary on this machine builds osb,
// and returns the function that lets the next one go. Without a lock file
// to hold, the build just goes ahead.
func lockBuild() (unlock func()) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "osb-test-build.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX) != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing the file releases the lock
}
