package cmdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
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
		cmd := exec.Command(gobin, "build", "-trimpath", "-o", built.bin, "github.com/osb-dev/osb/cmd/osb")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		unlock := lockBuild()
		out, err := cmd.CombinedOutput()
		unlock()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.skip != "" {
		t.Skip(built.skip)
	}
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// RemoveOsb removes what BuildOsb built, if anything.
func RemoveOsb() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
