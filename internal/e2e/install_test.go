package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// `make install` puts osb and its man pages where the guide says: the
// binary in GOBIN, every page of docs/man in ../share/man/man1 beside it,
// where man finds them once that bin directory is on PATH.
func TestMakeInstallInstallsManPages(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and installs osb; skipped under -short")
	}
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make here")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	cmd := exec.Command(makeBin, "-C", root, "install")
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(dest, "bin"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(dest, "bin", "osb"), "version").CombinedOutput(); err != nil {
		t.Errorf("the installed osb: %v %s", err, out)
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "man", "*.1"))
	if len(pages) == 0 {
		t.Fatal("no man pages in docs/man")
	}
	for _, page := range pages {
		want, _ := os.ReadFile(page)
		got, err := os.ReadFile(filepath.Join(dest, "share", "man", "man1", filepath.Base(page)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s not installed as it is in docs/man: %v", filepath.Base(page), err)
		}
	}
}
