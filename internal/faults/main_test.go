package faults

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/commands"
)

// asOsb makes the test binary run as osb itself: a real `osb server` in a
// process of its own, which a test can freeze.
const asOsb = "OSB_FAULTS_RUN_AS_OSB"

// binDir holds the osb binary built for the tests, removed at the end.
var binDir string

func TestMain(m *testing.M) {
	if os.Getenv(asOsb) == "1" {
		os.Exit(commands.Main())
	}
	var err error
	if binDir, err = os.MkdirTemp("", "osb-faults-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	builtOsb  string
	buildErr  string
)

// osbBinary builds cmd/osb once for the whole package and returns its
// path: the fault table runs osb as a user would, a process of its own
// with its own signals, environment and exit code.
func osbBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			buildErr = "no go tool on PATH to build osb"
			return
		}
		bin := filepath.Join(binDir, "osb")
		if out, err := exec.Command(gobin, "build", "-o", bin, "github.com/osb-dev/osb/cmd/osb").CombinedOutput(); err != nil {
			buildErr = "go build: " + err.Error() + "\n" + string(out)
			return
		}
		builtOsb = bin
	})
	if builtOsb == "" {
		t.Fatal(buildErr)
	}
	return builtOsb
}
