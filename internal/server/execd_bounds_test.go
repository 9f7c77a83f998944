//go:build linux

package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// TestExecdMemoryStaysBoundedForASlowReader: a command that writes long
// lines faster than its client reads them is held back, as a pipe holds a
// writer back: it ends up blocked in write while execd (the sandbox's
// agent) holds a bounded amount of its output, not all of it. The client
// here reads the first bytes of the stream and then nothing.
func TestExecdMemoryStaysBoundedForASlowReader(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	if cg := sandbox.Cgroups(); !cg.Available {
		// Without a memory limit the unbounded case would take the host's memory.
		t.Skip("no cgroups for a memory limit here: " + cg.Reason)
	}
	if os.Geteuid() != 0 {
		t.Skip("reads the memory and state of the sandbox's processes on the host, which needs root")
	}
	id := c.create(nil) // 512Mi
	e := c.endpoint(id, 44772, false)
	// 16 MiB lines of 'a', 4 GiB in all: far more than execd may hold.
	body := `{"command":"head -c 4294967296 /dev/zero | tr '\\0' a | fold -w 16777216"}`
	req, _ := http.NewRequest("POST", "http://"+e.Endpoint+"/command", strings.NewReader(body))
	req.Header.Set(server.SecureAccessHeader, e.Headers[server.SecureAccessHeader])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	sb, _ := c.srv.Sandbox(id)
	agent := processNamed(t, sb, "osb-sandbox-agent")
	const bound = 256 << 20
	stuck := 0
	var lastWritten int64 = -1
	for deadline := time.Now().Add(2 * time.Minute); stuck < 5; time.Sleep(200 * time.Millisecond) {
		rss, ok := rssBytes(agent)
		if !ok {
			t.Fatalf("the sandbox's execd (pid %d) is gone", agent)
		}
		// Under -race the writer held back is the proof (raceBuild).
		if rss > bound && !raceBuild {
			t.Fatalf("execd holds %d MiB of a slow reader's output (bound %d MiB)", rss>>20, bound>>20)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer was never held back; execd at %d MiB", rss>>20)
		}
		fold := processNamed(t, sb, "fold")
		written, wchan := ioWritten(fold), procText(fold, "wchan")
		if strings.Contains(wchan, "pipe") && written == lastWritten {
			stuck++
		} else {
			stuck = 0
		}
		lastWritten = written
	}
	if written := lastWritten; written >= 1<<30 {
		t.Errorf("the writer got %d MiB out before it was held back", written>>20)
	}
}

// processNamed is the pid of the sandbox's process whose argv[0] is name.
func processNamed(t *testing.T, sb *sandbox.Sandbox, name string) int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, pid := range sb.PIDs() {
			argv0, _, _ := strings.Cut(procText(pid, "cmdline"), "\x00")
			if argv0 == name || strings.HasSuffix(argv0, "/"+name) {
				return pid
			}
		}
	}
	t.Fatalf("no process %s in the sandbox", name)
	return 0
}

func procText(pid int, file string) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	return string(b)
}

// rssBytes is a process's resident memory.
func rssBytes(pid int) (int64, bool) {
	for _, line := range strings.Split(procText(pid, "status"), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// ioWritten is how many bytes a process has written so far.
func ioWritten(pid int) int64 {
	for _, line := range bytes.Split([]byte(procText(pid, "io")), []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("wchar: ")); ok {
			n, _ := strconv.ParseInt(string(v), 10, 64)
			return n
		}
	}
	return -1
}

// TestDeadExecdIsRestarted: when the sandbox's execd dies (here: killed
// from the host, as the OOM killer would), requests in the meantime answer
// at once, never hang and never crash the server; the sandbox's init starts
// a new execd on the same socket, the sandbox's log and events say so, and
// the sandbox goes on serving commands.
func TestDeadExecdIsRestarted(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(nil)
	if out, _ := c.sh(id, "echo before"); out != "before" {
		t.Fatalf("before: %q", out)
	}
	sb, _ := c.srv.Sandbox(id)
	for round := range 2 {
		agent := processNamed(t, sb, "osb-sandbox-agent")
		if err := syscall.Kill(agent, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		e := c.endpoint(id, 44772, false)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			// A request with a body, on a connection the client keeps: a
			// panic in the server would drop it, and c.do fails on that.
			r := c.do("POST", "http://"+e.Endpoint+"/command", `{"command":"echo after"}`, server.SecureAccessHeader, e.Headers[server.SecureAccessHeader])
			if r.status == 200 && strings.Contains(string(r.body), `"text":"after"`) {
				if id := r.header.Get("Osb-Agent-Id"); id != "" {
					t.Errorf("the agent's id reached the client: %q", id)
				}
				break
			}
			if r.status != 502 || time.Now().After(deadline) {
				t.Fatalf("round %d: while execd restarts: %d %s", round, r.status, r.body)
			}
		}
		if pid := processNamed(t, sb, "osb-sandbox-agent"); pid == agent {
			t.Fatalf("round %d: execd %d still there after SIGKILL", round, pid)
		}
	}
	if s := c.state(id); s != "Running" {
		t.Errorf("state %s", s)
	}
	log := string(c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/logs", nil)).body)
	if n := strings.Count(log, "osb sandbox init: execd killed by SIGKILL; restarted\n"); n != 2 {
		t.Errorf("the sandbox log tells %d restarts, want 2:\n%s", n, log)
	}
	events := string(c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/events", nil)).body)
	if n := strings.Count(events, " ExecdRestarted: execd died and the sandbox's init started a new one\n"); n != 2 {
		t.Errorf("the sandbox's events tell %d restarts, want 2:\n%s", n, events)
	}
}

// TestUnreachableExecdAnswers502: requests with a body to a sandbox whose
// execd cannot be reached (its socket is gone) each answer 502 at once, on
// a connection that stays usable (the server does not panic on them), and
// the sandbox's events tell of it.
func TestUnreachableExecdAnswers502(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(nil)
	sb, _ := c.srv.Sandbox(id)
	if err := os.Remove(sb.AgentSocket()); err != nil {
		t.Fatal(err)
	}
	e := c.endpoint(id, 44772, false)
	for i := range 20 {
		// c.do fails the test if the server drops the connection.
		r := c.do("POST", "http://"+e.Endpoint+"/command", `{"command":"true"}`, server.SecureAccessHeader, e.Headers[server.SecureAccessHeader])
		if r.status != 502 || !strings.Contains(string(r.body), "the sandbox's execd is not answering") {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	// The sandbox's events say so, once.
	events := string(c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/events", nil)).body)
	if n := strings.Count(events, " ExecdUnreachable: dial unix "); n != 1 {
		t.Errorf("%d ExecdUnreachable events, want 1:\n%s", n, events)
	}
}

// TestEmptyLimitsGetTheDefaults: resourceLimits {} is not "no limits": the
// sandbox gets the memory the official CLI asks for by default (2Gi), as
// its metrics show, unless the server accepts unlimited sandboxes.
func TestEmptyLimitsGetTheDefaults(t *testing.T) {
	t.Parallel()
	if cg := sandbox.Cgroups(); !cg.Available {
		t.Skip("no cgroups for limits here: " + cg.Reason)
	}
	strict := newClient(t, func(o *server.Options) { o.AllowUnlimited = false })
	if !strict.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	memTotal := func(c *client, limits map[string]string) float64 {
		id := c.create(map[string]any{"resourceLimits": limits})
		m := c.expect(200, c.do("GET", c.srv.URL()+"/sandboxes/"+id+"/proxy/44772/metrics", nil)).json(t)
		return m["mem_total_mib"].(float64)
	}
	if got := memTotal(strict, map[string]string{}); got != 2048 {
		t.Errorf("resourceLimits {}: %v MiB, want the default 2048", got)
	}
	if got := memTotal(strict, map[string]string{"cpu": "250m"}); got != 2048 {
		t.Errorf("resourceLimits without memory: %v MiB, want the default 2048", got)
	}
	if got := memTotal(strict, map[string]string{"memory": "96Mi"}); got != 96 {
		t.Errorf("resourceLimits memory 96Mi: %v MiB", got)
	}
	open := newClient(t) // --allow-unlimited
	if got := memTotal(open, map[string]string{}); got == 2048 {
		t.Errorf("with --allow-unlimited, resourceLimits {} still got the default limit")
	}
}

// TestOpenFilesBoundedPerSandbox: the processes a sandbox may have, each
// at its open-files limit, hold at most a quarter of the host's file-max,
// and root in the sandbox cannot raise that limit.
func TestOpenFilesBoundedPerSandbox(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	if cg := sandbox.Cgroups(); !cg.Available {
		t.Skip("no cgroups for a pids limit here: " + cg.Reason)
	}
	raw, err := os.ReadFile("/proc/sys/fs/file-max")
	if err != nil {
		t.Skip("no /proc/sys/fs/file-max here")
	}
	fileMax, _ := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	id := c.create(map[string]any{"resourceLimits": map[string]string{"cpu": "500m", "memory": "512Mi", "pids": "100"}})
	out, _ := c.sh(id, "ulimit -n; ulimit -Hn; (ulimit -Hn 1048576 && echo raised) 2>/dev/null || echo refused")
	var soft, hard uint64
	var raise string
	if n, _ := fmt.Sscan(out, &soft, &hard, &raise); n != 3 {
		t.Fatalf("ulimit said %q", out)
	}
	// 100 processes of its own, and the init's and execd's reserve of 256.
	if held := (100 + 256) * hard; soft != hard || held > fileMax/4 && hard > 1024 {
		t.Errorf("open files: soft %d, hard %d: %d processes may hold %d files, more than a quarter of file-max %d", soft, hard, 356, held, fileMax)
	}
	if raise != "refused" {
		t.Errorf("root in the sandbox raised its open-files limit: %q", out)
	}
}

// TestSandboxKernelQuotas: the per-user kernel quotas (inotify instances,
// POSIX message-queue bytes) are not one sandbox's to take from the others.
// As root each sandbox has its own, whole (its user namespace has an owner
// of its own: sandbox.TestSandboxesDoNotShareUserQuotas is the attack);
// rootless, all share the server's user's, and each gets a quarter.
func TestSandboxKernelQuotas(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	raw, err := os.ReadFile("/proc/sys/fs/inotify/max_user_instances")
	if err != nil {
		t.Skip("no inotify limits here")
	}
	hostMax, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	id := c.create(nil)
	// Opens inotify instances until the kernel refuses one, and says how
	// many; they are all closed again when it exits.
	out, code := c.sh(id, `python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 100000 and libc.inotify_init() >= 0:
    n += 1
print(n)
'; ulimit -q`)
	var n int
	var mq string
	if k, _ := fmt.Sscan(out, &n, &mq); k != 2 || code != 0 {
		t.Fatalf("the sandbox said %q (exit %d)", out, code)
	}
	var own unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_MSGQUEUE, &own)
	share := uint64(1)
	if os.Geteuid() != 0 {
		share = 4
	}
	// Rootless, other processes of the server's user may hold some of it.
	if uint64(n) > uint64(hostMax)/share || share == 1 && uint64(n) != uint64(hostMax) {
		t.Errorf("one sandbox held %d inotify instances, want %d of the %d a user has", n, uint64(hostMax)/share, hostMax)
	}
	if q, err := strconv.ParseUint(mq, 10, 64); err != nil || q != own.Max/share {
		t.Errorf("message-queue bytes of the sandbox: %s, want %d of the %d a user has", mq, own.Max/share, own.Max)
	}
}
