//go:build linux

package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// One data dir, one server: a second server refuses it while the first
// runs, and gets it once the first has closed.
func TestDataDirIsExclusive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, NoIsolation: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.New(server.Options{Listen: "127.0.0.1:0", DataDir: dir, NoIsolation: true})
	if err == nil || err.Error() != "data dir "+dir+" is in use by another osb server" {
		t.Fatalf("second server on the same data dir: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	servertest.Start(t, func(o *server.Options) { o.DataDir = dir })
}

// What a killed server left in sandboxes/ is removed by the next server on
// that data dir; templates and snapshots stay.
func TestStaleSandboxesAreRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stale := filepath.Join(dir, "sandboxes", "0123abcd", "fs", "workspace")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(stale, "data.txt"), []byte("old"), 0o600)
	os.Chmod(stale, 0o500) // a sandbox may leave read-only directories behind
	os.MkdirAll(filepath.Join(dir, "templates"), 0o700)
	os.WriteFile(filepath.Join(dir, "templates", "keep.me"), []byte("x"), 0o600)

	var log cmdtest.SyncBuffer
	srv := servertest.Start(t, func(o *server.Options) { o.DataDir = dir; o.Log = &log })
	if left, _ := os.ReadDir(filepath.Join(dir, "sandboxes")); len(left) != 0 {
		t.Errorf("left in sandboxes/: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "templates", "keep.me")); err != nil {
		t.Errorf("templates/ was touched: %v", err)
	}
	if !strings.Contains(log.String(), "removed 1 sandbox directories left by an earlier server") {
		t.Errorf("log: %q", log.String())
	}
	if srv.DataDir() != dir {
		t.Errorf("data dir %s", srv.DataDir())
	}
}
