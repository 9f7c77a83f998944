//go:build linux

package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// TestDeadExecdShows: a sandbox whose execd was killed stays Running, and
// `sandbox get` says execd is down until a new one answers; `sandbox
// health` waits for the restarted one, and reports unhealthy one that
// cannot be reached.
func TestDeadExecdShows(t *testing.T) {
	env := cmdtest.New(t)
	if !env.Server.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine: no in-sandbox execd")
	}
	id := env.NewSandbox()
	killExecd(t, env, id)
	awaitReason(t, env, id, "EXECD_UNAVAILABLE")
	out := cmdtest.Squeeze(env.Must("sandbox", "get", id))
	if !strings.Contains(out, "status  Running\n") {
		t.Errorf("get, execd killed: not Running:\n%s", out)
	}
	want := "status_reason  EXECD_UNAVAILABLE\nstatus_message  execd killed by SIGKILL"
	if !strings.Contains(out, want) {
		t.Errorf("get, execd killed:\n%s\nwant it to contain:\n%s", out, want)
	}
	// The restarted execd answers the ping, and the status clears.
	if out := env.Must("sandbox", "health", id); !strings.Contains(out, "Sandbox "+id+" is healthy") {
		t.Errorf("health once execd restarted: %q", out)
	}
	if r := reason(t, env, id); r != "CONTAINER_RUNNING" {
		t.Errorf("reason once execd answers again: %s", r)
	}
	// An execd that dies where it cannot be reached any more stays down.
	sb, _ := env.Server.Sandbox(id)
	if err := os.Remove(sb.AgentSocket()); err != nil {
		t.Fatal(err)
	}
	killExecd(t, env, id)
	awaitReason(t, env, id, "EXECD_UNAVAILABLE")
	r := env.Run("sandbox", "health", id).ExpectCode(t, 0)
	if want := "Sandbox " + id + " is unhealthy: "; !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "execd is not answering") {
		t.Errorf("health, execd unreachable: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	if out := cmdtest.Squeeze(env.Must("sandbox", "get", id)); !strings.Contains(out, "has not answered yet") {
		t.Errorf("get, execd restarted but unreachable:\n%s", out)
	}
}

// killExecd kills sandbox id's execd from the host, as the OOM killer would.
func killExecd(t *testing.T, env *cmdtest.Env, id string) {
	t.Helper()
	sb, _ := env.Server.Sandbox(id)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, pid := range sb.PIDs() {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); argv0 == "osb-sandbox-agent" {
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
	}
	t.Fatal("no execd in the sandbox")
}

// reason is sandbox id's status reason, as `sandbox get -o json` shows it.
func reason(t *testing.T, env *cmdtest.Env, id string) string {
	t.Helper()
	var v struct{ Status struct{ Reason string } }
	if err := json.Unmarshal([]byte(env.Must("sandbox", "get", id, "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	return v.Status.Reason
}

func awaitReason(t *testing.T, env *cmdtest.Env, id, want string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		r := reason(t, env, id)
		if r == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the status reason stayed %s, never %s", r, want)
		}
	}
}
