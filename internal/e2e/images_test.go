package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// Image and volume flags that cannot work are refused before the server
// starts: exit 2, one line.
func TestServerImageFlagsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	dir := t.TempDir()
	refused(t, bin, env, "--host-programs runs no images: it cannot be combined with --image-dir", "--host-programs", "--image-dir", dir)
	missing := filepath.Join(dir, "missing")
	refused(t, bin, env, "--image-dir "+missing+" is not a directory", "--image-dir", missing)
	refused(t, bin, env, `--allow-host-path "data" must be an absolute path`, "--allow-host-path", "data")
}
