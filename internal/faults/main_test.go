package faults

import (
	"os"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
)

// asOsb makes the test binary run as osb itself: a real `osb server` in a
// process of its own, which a test can freeze.
const asOsb = "OSB_FAULTS_RUN_AS_OSB"

func TestMain(m *testing.M) {
	if os.Getenv(asOsb) == "1" {
		os.Exit(commands.Main())
	}
	cmdtest.DefaultChildSignals() // the table signals the osb it runs
	code := m.Run()
	cmdtest.RemoveOsb()
	os.Exit(code)
}

// osbBinary builds cmd/osb once for the whole package and returns its
// path: the fault table runs osb as a user would, a process of its own
// with its own signals, environment and exit code.
func osbBinary(t *testing.T) string { return cmdtest.BuildOsb(t) }
