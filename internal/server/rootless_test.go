//go:build linux

package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// rootlessAttacks are the isolation tests that hold for a server without
// root as they do for one with it (limits need cgroups nobody lacks here).
var rootlessAttacks = []string{
	"TestSandboxSeesNoHostFiles", "TestSandboxCannotRemountOrEscapeItsRoot",
	"TestSandboxSeesOnlyItsOwnProcesses", "TestSandboxNetworkIsItsOwn", "TestServerCloseLeavesNothing",
	"TestImageSandboxBoundary", "TestNamedVolumeSharedKeptAndReadOnly",
	"TestEgressRefusesTheHostsAddresses", "TestEgressAddressRulesFromInsideASandbox", "TestEgressCapsTunnelsFromInsideASandbox", "TestExecdMemoryStaysBoundedForASlowReader", "TestDeadExecdIsRestarted", "TestUnreachableExecdAnswers502", "TestSandboxKernelQuotas", "TestSandboxShmIsBounded",
	"TestSandboxCannotTakeTheKeyQuota", "TestInitReapsWhileExecdRestartWaits",
}

// The escape attempts of isolation_test.go fail too against a server run
// by an ordinary user (rootless user namespaces): this test binary runs
// them again as nobody.
func TestIsolationHoldsRootless(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the isolation tests again as another user; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the tests as another user")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A directory everyone may enter, with the binary and a home for nobody.
	dir, err := os.MkdirTemp("", "osb-rootless-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin, home := filepath.Join(dir, "server.test"), filepath.Join(dir, "home")
	// cp writes the copy, not this process: a descriptor of ours open for
	// writing would be inherited by whatever another test forks at the
	// time, and exec would then fail with "text file busy".
	if out, err := exec.Command("cp", self, bin).CombinedOutput(); err != nil {
		t.Fatalf("copying the test binary: %v\n%s", err, out)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.count=1", "-test.v", "-test.run", "^("+strings.Join(rootlessAttacks, "|")+")$")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "TMPDIR=" + home, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("isolation tests as nobody: %v\n%s", err, out)
	}
	// A test that skips as nobody (busybox missing, say) skips here too,
	// with its reason; anything else but a pass fails.
	for _, name := range rootlessAttacks {
		t.Run(name, func(t *testing.T) {
			switch {
			case strings.Contains(string(out), "--- PASS: "+name+" "):
			case strings.Contains(string(out), "--- SKIP: "+name+" "):
				t.Skipf("skipped as nobody: %s", skipReason(string(out), name))
			default:
				t.Errorf("did not pass as nobody:\n%s", out)
			}
		})
	}
}

// skipReason is what test name logged before it skipped, in go test -v
// output: the lines between the last "=== " line before its "--- SKIP".
func skipReason(out, name string) string {
	end := strings.LastIndex(out, "--- SKIP: "+name+" ")
	start := strings.LastIndex(out[:end], "=== ")
	_, reason, _ := strings.Cut(out[start:end], "\n")
	return strings.TrimSpace(reason)
}
