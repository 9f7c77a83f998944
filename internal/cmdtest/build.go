package cmdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/server/sandbox/program"
)

// built is cmd/osb compiled for one test binary: once, by the first test
// that asks, then shared by every test of the package.
var built struct {
	once sync.Once
	dir  string
	bin  string
	skip string // why there is no binary to build
	err  error
}

// BuildOsb compiles cmd/osb once per test binary and returns its path, for
// tests that run osb as a user does: a process of its own. A package that
// calls it removes the binary with RemoveOsb from TestMain.
func BuildOsb(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			built.skip = "no go tool on PATH to build osb"
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "osb-test-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "osb")
		// The flags of make build and make install, as goreleaser builds
		// osb: the binary users get, and packages compiled once in Go's
		// cache for every test binary that builds osb, and for the README
		// test's make install. One build at a time: test binaries run in
		// parallel, and two compiling the same packages at once both do
		// all the work.
		unlock := lockBuild()
		built.err = buildOsb(gobin, built.bin)
		unlock()
	})
	if built.skip != "" {
		t.Skip(built.skip)
	}
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// buildOsb builds cmd/osb-sandbox where package program embeds it, then
// osb carrying it, as make build does.
func buildOsb(gobin, bin string) error {
	dir, err := exec.Command(gobin, "list", "-f", "{{.Dir}}", programPkg).Output()
	if err != nil {
		return fmt.Errorf("go list %s: %v", programPkg, err)
	}
	prog := filepath.Join(strings.TrimSpace(string(dir)), program.File(runtime.GOOS, runtime.GOARCH))
	// Renamed into place: a build reading the directory never sees half a file.
	if err := goBuild(gobin, "-trimpath", "-ldflags=-s -w", "-o", prog+".new", "github.com/osb-dev/osb/cmd/osb-sandbox"); err != nil {
		return err
	}
	if err := os.Rename(prog+".new", prog); err != nil {
		return err
	}
	return goBuild(gobin, "-tags", "sandboxprogram", "-trimpath", "-o", bin, "github.com/osb-dev/osb/cmd/osb")
}

const programPkg = "github.com/osb-dev/osb/internal/server/sandbox/program"

func goBuild(gobin string, args ...string) error {
	cmd := exec.Command(gobin, append([]string{"build"}, args...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return nil
}

// RemoveOsb removes what BuildOsb built, if anything.
func RemoveOsb() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
