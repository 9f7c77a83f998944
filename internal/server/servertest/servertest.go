// Package servertest starts a local osb server for tests. Sandboxes are
// isolated with util-linux unshare/nsenter where the machine allows it, so
// test binaries need no TestMain hook.
package servertest

import (
	"runtime"
	"testing"

	"github.com/osb-dev/osb/internal/server"
)

// APIKey is the key every server started by Start requires.
const APIKey = "test-key"

// Start runs a server on 127.0.0.1:0 with APIKey and a fresh data dir; opts
// adjust the Options. Close (which kills every sandbox) runs at cleanup.
func Start(t testing.TB, opts ...func(*server.Options)) *server.Server {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("osb server runs sandboxes on Linux only")
	}
	// Limits are enforced where the machine has cgroups; tests about
	// something else still run where it has none. No spare sandbox is
	// made ahead of the creates: the tests of spares ask for one, and the
	// binary's tests (e2e, interop, differential) run with them.
	o := server.Options{Listen: "127.0.0.1:0", APIKey: APIKey, DataDir: t.TempDir(), AllowUnlimited: true, NoSpare: true}
	for _, f := range opts {
		f(&o)
	}
	s, err := server.New(o)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("servertest: close: %v", err)
		}
	})
	return s
}

// NoIsolation is an option for Start (and cmdtest.New) that runs sandboxes
// without namespaces: faster, and status messages are the same on every
// machine.
func NoIsolation(o *server.Options) { o.NoIsolation = true }
