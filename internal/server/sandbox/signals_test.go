//go:build linux

package sandbox

import (
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestProcessesStartWithDefaultSignals runs the server as under nohup in a
// script's background job (SIGHUP and SIGINT ignored): the sandbox's
// processes still start with neither ignored, as in a container, and the
// server itself goes on ignoring them. Not parallel: it changes the test
// process's signal dispositions.
func TestProcessesStartWithDefaultSignals(t *testing.T) {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
	t.Cleanup(func() { signal.Reset(syscall.SIGHUP, syscall.SIGINT) })
	for _, isolated := range []bool{false, true} {
		if isolated && !Probe().Available {
			t.Log("isolated: namespaces unavailable:", Probe().Reason)
			continue
		}
		s := start(t, isolated)
		out := run(t, s, CommandSpec{Shell: "grep SigIgn: /proc/self/status"})
		mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(out, "SigIgn:")), 16, 64)
		if err != nil {
			t.Fatalf("isolated %v: %q", isolated, out)
		}
		if hupOrInt := uint64(1<<(syscall.SIGHUP-1) | 1<<(syscall.SIGINT-1)); mask&hupOrInt != 0 {
			t.Errorf("isolated %v: a sandbox process ignores signals %#x (SigIgn %q)", isolated, mask&hupOrInt, out)
		}
	}
	// The server still ignores them: this test process is alive.
	syscall.Kill(syscall.Getpid(), syscall.SIGHUP)
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
}
