package contract

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain checks, after a full run, that the traffic tests used every
// operation specs/ describes: a route in the spec that no osb command
// exercises is either dead or untested.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		specs, err := readOurSpecs()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if stale := unusedDivergences(); len(stale) > 0 && upstreamPresent() {
			fmt.Fprintf(os.Stderr, "FAIL: allow-list entries no test needed (remove them, or add the test that shows the divergence):\n\t%s\n", strings.Join(stale, "\n\t"))
			code = 1
		}
		if missing := uncovered(specs); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no traffic test exercises these operations of specs/:\n\t%s\n", strings.Join(missing, "\n\t"))
			code = 1
		}
	}
	os.Exit(code)
}

func upstreamPresent() bool {
	_, err := os.Stat(upstreamDir)
	return err == nil
}
