package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// lockDataDir makes the server the only one using its data directory, for
// as long as the returned file stays open: two servers would delete each
// other's sandboxes and overwrite each other's templates and snapshots.
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	// A lock left to the closing of its descriptor (a server that ended
	// without Close, which unlocks) can still look held for a moment: a
	// process forking elsewhere in that program holds a copy of every
	// descriptor until it execs. So a busy lock is tried again for a while.
	deadline := time.Now().Add(2 * time.Second)
	for {
		var busy bool
		busy, err = tryLock(f)
		if err == nil {
			return f, nil
		}
		if !busy || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.Close()
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("data dir %s is in use by another osb server", dir)
	}
	return nil, fmt.Errorf("cannot lock data dir %s: %w", dir, err)
}

// removeStaleSandboxes deletes what a server that was killed (SIGKILL, a
// crash) left in sandboxes/: sandboxes do not outlive their server, so with
// the lock held nothing there belongs to anyone.
func (s *Server) removeStaleSandboxes() error {
	dir := filepath.Join(s.dataDir, "sandboxes")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if err := sandbox.RemoveStale(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	if len(entries) > 0 {
		s.log.event("removed %d sandbox directories left by an earlier server", len(entries)-len(errs))
	}
	return errors.Join(errs...)
}
