//go:build linux

package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// With NoSpare (osb server --no-spare) the server makes no sandbox ahead
// of a request, where it otherwise would.
func TestNoSpareMakesNone(t *testing.T) {
	if !sandbox.Probe().Available || !sandbox.Cgroups().Available {
		t.Skip("no spares here anyway: isolated sandboxes with cgroups are needed")
	}
	t.Parallel()
	for _, off := range []bool{true, false} {
		s, err := New(Options{Listen: "127.0.0.1:0", DataDir: t.TempDir(), NoSpare: off})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		s.fillSpare()
		s.spare.mu.Lock()
		filling := s.spare.filling
		made := filling != nil || s.spare.sb != nil
		s.spare.mu.Unlock()
		if filling != nil {
			<-filling
		}
		dirs, _ := os.ReadDir(filepath.Join(s.DataDir(), "sandboxes"))
		if made == off || (len(dirs) == 0) != off {
			t.Errorf("NoSpare %v: a spare made %v, %d sandbox directories", off, made, len(dirs))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
