package cp_test

import (
	"crypto/rand"
	"maps"
	"path/filepath"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// The tar path against the real execd binary: it cannot end a session's
// input and sends the exit frame before the last output, and a tree still
// goes up and comes back whole (the sandbox's paths are the host's here).
func TestTarPathOnRealExecd(t *testing.T) {
	t.Parallel()
	env := cmdtest.RealExecd(t)
	big := make([]byte, 3<<20) // more than execd's 1 MiB replay buffer and its pipe
	rand.Read(big)
	tree := maps.Clone(project)
	tree["big.bin"] = node{mode: 0o644, content: string(big)}
	src := filepath.Join(t.TempDir(), "proj")
	makeTree(t, src, tree)
	remote := t.TempDir()
	sb := cmdtest.RealExecdSandbox
	for i := range 3 {
		env.Must("cp", src, sb+":"+remote, "--via", "tar")
		back := t.TempDir()
		env.Must("cp", sb+":"+filepath.Join(remote, "proj"), back, "--via", "tar")
		if t.Failed() {
			return
		}
		compareTrees(t, readTree(t, filepath.Join(back, "proj")), tree)
		if t.Failed() {
			t.Fatalf("round trip %d", i)
		}
	}
}
