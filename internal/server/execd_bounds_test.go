//go:build linux

package server_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// TestExecdMemoryStaysBoundedForASlowReader: a command that writes long
// lines faster than its client reads them is held back, as a pipe holds a
// writer back: it ends up blocked in write while execd (the sandbox's
// agent) holds a bounded amount of its output, not all of it. The client
// here reads the first bytes of the stream and then nothing. Rootless
// the sandbox's processes are the test's user's, so it reads their state
// as it does as root; where no cgroups give the sandbox a memory limit,
// the 1 GiB written is what an unbounded execd would take from the host.
func TestExecdMemoryStaysBoundedForASlowReader(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(nil) // 512Mi, where cgroups can be made
	e := c.endpoint(id, 44772, false)
	// 16 MiB lines of 'a', 1 GiB in all: far more than execd may hold.
	body := `{"command":"head -c 1073741824 /dev/zero | tr '\\0' a | fold -w 16777216"}`
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
	fold := processNamed(t, sb, "fold")
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
		written, wchan := ioWritten(fold), procText(fold, "wchan")
		if written < 0 || strings.Contains(procText(fold, "stat"), ") Z ") {
			t.Fatalf("the command wrote all its output (1 GiB) while the client read 16 bytes: nothing held it back")
		}
		// The writer waits on a full pipe that execd does not read: not an
		// execd too slow (under load, under -race) to keep up.
		if strings.Contains(wchan, "pipe") && written == lastWritten && asleep(agent) {
			stuck++
		} else {
			stuck = 0
		}
		lastWritten = written
	}
	t.Logf("the writer was held back after %d MiB", lastWritten>>20)
	if written := lastWritten; written >= bound {
		t.Errorf("the writer got %d MiB out before it was held back", written>>20)
	}
}

// asleep reports whether every thread of process pid sleeps: none runs
// or waits for a CPU.
func asleep(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		stat := procText(pid, "task/"+task.Name()+"/stat")
		if i := strings.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] != 'S' {
			return false
		}
	}
	return true
}

// processNamed is the pid of the sandbox's process whose argv[0] is name.
func processNamed(t *testing.T, sb *sandbox.Sandbox, name string) int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if pid := findProcess(sb, name); pid != 0 {
			return pid
		}
	}
	t.Fatalf("no process %s in the sandbox", name)
	return 0
}

// findProcess is the host pid of a process of sb named name, 0 if none.
func findProcess(sb *sandbox.Sandbox, name string) int {
	for _, pid := range sb.PIDs() {
		argv0, _, _ := strings.Cut(procText(pid, "cmdline"), "\x00")
		if argv0 == name || strings.HasSuffix(argv0, "/"+name) {
			return pid
		}
	}
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
// the sandbox goes on serving commands. From the death until the new execd
// answers, the sandbox stays Running and its status says execd is down.
func TestDeadExecdIsRestarted(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(nil)
	if out, _ := c.sh(id, "echo before"); out != "before" {
		t.Fatalf("before: %q", out)
	}
	sb, _ := c.srv.Sandbox(id)
	usual := sandboxStatus(t, c, id)
	for round := range 2 {
		agent := processNamed(t, sb, "osb-sandbox-agent")
		if err := syscall.Kill(agent, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		st := awaitStatusReason(t, c, id, "EXECD_UNAVAILABLE")
		if st["state"] != "Running" || !strings.Contains(st["message"].(string), "execd killed by SIGKILL") ||
			!strings.Contains(st["message"].(string), []string{"died once", "died 2 times"}[round]) {
			t.Errorf("round %d: while execd is down, the status is %v", round, st)
		}
		awaitExecd(t, c, id, round)
		if pid := processNamed(t, sb, "osb-sandbox-agent"); pid == agent {
			t.Fatalf("round %d: execd %d still there after SIGKILL", round, pid)
		}
		if st := sandboxStatus(t, c, id); st["reason"] != usual["reason"] || st["message"] != usual["message"] {
			t.Errorf("round %d: once execd answers again, the status is %v", round, st)
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

// TestExecdDeathBreaksItsStreams: a command's event stream that execd's
// death cuts off reaches the client as a broken stream, as a real execd's
// does when it dies, never as one that ended: a client must not take the
// output it got for all there was.
func TestExecdDeathBreaksItsStreams(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(nil)
	e := c.endpoint(id, 44772, false)
	req, _ := http.NewRequest("POST", "http://"+e.Endpoint+"/command", strings.NewReader(`{"command":"echo started; sleep 600"}`))
	req.Header.Set(server.SecureAccessHeader, e.Headers[server.SecureAccessHeader])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before the command's output: %v", err)
		}
		if strings.Contains(line, `"text":"started`) {
			break
		}
	}
	sb, _ := c.srv.Sandbox(id)
	if err := syscall.Kill(processNamed(t, sb, "osb-sandbox-agent"), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if err == nil {
		t.Errorf("the stream of a command whose execd died ended cleanly, after %q", rest)
	}
	if bytes.ContainsRune(rest, 0) {
		t.Errorf("the agent's end mark reached the client: %q", rest)
	}
}

// fakeExecdState is an entrypoint that tries, over and over, as any
// process of a sandbox could, to make the server believe its execd is
// down: it writes a report of deaths in the init's own format where the
// agent keeps its state, and to every descriptor of the init it can open.
// Once it has tried (every way) it says so in /workspace/tried.
const fakeExecdState = `fake="7 waiting 0 faked by the sandbox"
while :; do
	echo "$fake" >/run/osb/execd.state
	for f in /proc/1/fd/*; do echo "$fake" >>"$f"; done
	echo >/workspace/tried
	sleep 0.01
done 2>/dev/null`

// TestSandboxCannotFakeExecdState: what a sandbox's status says of its
// execd comes from the init alone, never from what a process in the
// sandbox writes: through a real death and restart, the status tells that
// one, and none of what the sandbox faked, then clears once execd answers.
func TestSandboxCannotFakeExecdState(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(map[string]any{"entrypoint": []string{"sh", "-c", fakeExecdState}})
	sb, _ := c.srv.Sandbox(id)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(sb.FSDir(), "workspace", "tried")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the entrypoint never tried")
		}
	}
	usual := sandboxStatus(t, c, id)
	if usual["reason"] != "CONTAINER_RUNNING" {
		t.Errorf("execd up, while the sandbox fakes its death: %v", usual)
	}
	agent := processNamed(t, sb, "osb-sandbox-agent")
	if err := syscall.Kill(agent, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := awaitStatusReason(t, c, id, "EXECD_UNAVAILABLE")
	if m := st["message"].(string); !strings.HasPrefix(m, "execd killed by SIGKILL") || !strings.Contains(m, "died once") {
		t.Errorf("execd killed once, while the sandbox fakes its death: %v", st)
	}
	awaitExecd(t, c, id, 0)
	if st := sandboxStatus(t, c, id); st["reason"] != usual["reason"] || st["message"] != usual["message"] {
		t.Errorf("once execd answers again, while the sandbox fakes its death: %v", st)
	}
}

// sandboxStatus is sandbox id's status, as GET /v1/sandboxes/{id} shows it.
func sandboxStatus(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	return c.expect(200, c.do("GET", "/sandboxes/"+id, nil)).json(t)["status"].(map[string]any)
}

// awaitStatusReason waits until sandbox id's status has reason, and
// returns that status.
func awaitStatusReason(t *testing.T, c *client, id, reason string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		st := sandboxStatus(t, c, id)
		if st["reason"] == reason {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the status never got reason %s: %v", reason, st)
		}
	}
}

// awaitExecd waits until sandbox id's execd, restarting, answers a command
// (the round-th restart).
func awaitExecd(t *testing.T, c *client, id string, round int) {
	t.Helper()
	e := c.endpoint(id, 44772, false)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		// A request with a body, on a connection the client keeps: a
		// panic in the server would drop it, and c.do fails on that.
		r := c.do("POST", "http://"+e.Endpoint+"/command", `{"command":"echo after"}`, server.SecureAccessHeader, e.Headers[server.SecureAccessHeader])
		if r.status == 200 && strings.Contains(string(r.body), `"text":"after"`) {
			if id := r.header.Get("Osb-Agent-Id"); id != "" {
				t.Errorf("the agent's id reached the client: %q", id)
			}
			return
		}
		if r.status != 502 || time.Now().After(deadline) {
			t.Fatalf("round %d: while execd restarts: %d %s", round, r.status, r.body)
		}
	}
}

// awaitGone waits until the host has no process pid (its parent collected it).
func awaitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) was never collected", what, pid)
		}
	}
}

// TestInitReapsWhileExecdRestartWaits: execd dying again soon after a
// restart is restarted after a wait (a back-off), and meanwhile the init
// still collects the sandbox's processes that end: one killed during the
// wait is gone before the new execd starts, not left a zombie until then.
func TestInitReapsWhileExecdRestartWaits(t *testing.T) {
	c := isolatedClient(t)
	id := c.create(nil)
	sb, _ := c.srv.Sandbox(id)
	// Three deaths in a row: the next restart waits a second and a half.
	for round := range 3 {
		if err := syscall.Kill(processNamed(t, sb, "osb-sandbox-agent"), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		awaitExecd(t, c, id, round)
	}
	c.sh(id, "sleep 1000 >/dev/null 2>&1 &") // left to the init when the shell ends
	orphan, agent := processNamed(t, sb, "sleep"), processNamed(t, sb, "osb-sandbox-agent")
	if err := syscall.Kill(agent, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, agent, "the killed execd")
	if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, orphan, "the killed sleep")
	if pid := findProcess(sb, "osb-sandbox-agent"); pid != 0 {
		t.Errorf("the init collected the killed sleep only after it restarted execd (pid %d)", pid)
	}
	awaitExecd(t, c, id, 3)
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
	var lastID string
	memTotal := func(c *client, limits map[string]string) float64 {
		lastID = c.create(map[string]any{"resourceLimits": limits})
		m := c.expect(200, c.do("GET", c.srv.URL()+"/sandboxes/"+lastID+"/proxy/44772/metrics", nil)).json(t)
		return m["mem_total_mib"].(float64)
	}
	if got := memTotal(strict, map[string]string{}); got != 2048 {
		t.Errorf("resourceLimits {}: %v MiB, want the default 2048", got)
	}
	if got := cpuLimit(t, lastID); got != 1 {
		t.Errorf("resourceLimits {}: %v CPUs, want the default 1", got)
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
	if got := cpuLimit(t, lastID); got != 0 {
		t.Errorf("with --allow-unlimited, resourceLimits {} got a limit of %v CPUs", got)
	}
}

// cpuLimit is how many CPUs sandbox id's cgroup allows (0: no limit).
func cpuLimit(t *testing.T, id string) float64 {
	t.Helper()
	for _, d := range cgroupDirs(t, id) {
		if b, err := os.ReadFile(filepath.Join(d, "cpu.max")); err == nil { // v2: "quota period"
			var quota string
			var period float64
			fmt.Sscan(string(b), &quota, &period)
			q, err := strconv.ParseFloat(quota, 64)
			if err != nil || period == 0 {
				return 0 // "max"
			}
			return q / period
		}
		quota, err1 := os.ReadFile(filepath.Join(d, "cpu.cfs_quota_us"))
		period, err2 := os.ReadFile(filepath.Join(d, "cpu.cfs_period_us"))
		if err1 == nil && err2 == nil {
			q, _ := strconv.ParseFloat(strings.TrimSpace(string(quota)), 64)
			p, _ := strconv.ParseFloat(strings.TrimSpace(string(period)), 64)
			if q < 0 || p == 0 {
				return 0
			}
			return q / p
		}
	}
	t.Fatalf("no cpu cgroup for sandbox %s", id)
	return 0
}

// TestOpenFilesBoundedPerSandbox: all the processes a sandbox may have
// (its pids cap and the init's and execd's reserve, the total of its pids
// cgroup), each at its open-files limit, hold at most a quarter of the
// host's file-max, even when the request asks for more processes than that
// allows (the cap is lowered, and an event says so; the server's log
// states the bound when it starts); root in the sandbox cannot raise its
// limit.
func TestOpenFilesBoundedPerSandbox(t *testing.T) {
	t.Parallel()
	log := &cmdtest.SyncBuffer{}
	c := newClient(t, func(o *server.Options) { o.Log = log })
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	if cg := sandbox.Cgroups(); !cg.Available {
		t.Skip("no cgroups for a pids limit here: " + cg.Reason)
	}
	raw, err := os.ReadFile("/proc/sys/fs/file-max")
	if err != nil {
		t.Skip("no /proc/sys/fs/file-max here")
	}
	fileMax, _ := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	const asked = 4096
	id := c.create(map[string]any{"resourceLimits": map[string]string{"cpu": "500m", "memory": "512Mi", "pids": itoa(asked)}})
	out, _ := c.sh(id, "ulimit -n; ulimit -Hn; (ulimit -Hn 1048576 && echo raised) 2>/dev/null || echo refused; grep 'Max open files' /proc/self/limits")
	var soft, hard, limSoft, limHard uint64
	var raise string
	if n, _ := fmt.Sscanf(out, "%d\n%d\n%s\nMax open files %d %d", &soft, &hard, &raise, &limSoft, &limHard); n != 5 {
		t.Fatalf("the sandbox said %q", out)
	}
	if soft != hard || limSoft != soft || limHard != hard {
		t.Errorf("open files: ulimit soft %d hard %d, /proc/self/limits %d %d", soft, hard, limSoft, limHard)
	}
	if raise != "refused" {
		t.Errorf("root in the sandbox raised its open-files limit: %q", out)
	}
	total := pidsMax(t, id)
	if held := uint64(total) * hard; held > fileMax/4 && fileMax/4/1024 > 64+256 {
		t.Errorf("pids.max %d, %d open files each: the sandbox may hold %d files, more than a quarter of file-max %d", total, hard, held, fileMax)
	}
	events := c.expect(200, c.do("GET", "/sandboxes/"+id+"/diagnostics/events?scope=runtime", nil)).json(t)["content"].(string)
	lowered := "LimitLowered: pids " + itoa(asked) + " lowered to " + itoa(total-256)
	if total-256 < asked && !strings.Contains(events, lowered) {
		t.Errorf("pids.max %d, but no event %q:\n%s", total, lowered, events)
	}
	stated := fmt.Sprintf("open files: file-max %d, a sandbox's share %d (a quarter); largest pids cap ", fileMax, fileMax/4)
	if total-256 < asked {
		stated += itoa(total - 256)
	}
	if !strings.Contains(log.String(), stated) {
		t.Errorf("the server's log does not state %q:\n%s", stated, log.String())
	}
}

// pidsMax is the pids.max of sandbox id's pids cgroup: its whole total,
// the init's and execd's reserve included.
func pidsMax(t *testing.T, id string) int {
	t.Helper()
	for _, d := range cgroupDirs(t, id) {
		if _, err := os.Stat(filepath.Join(d, "procs")); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "pids.max")); err == nil {
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s/pids.max: %q", d, b)
			}
			return n
		}
	}
	t.Fatalf("no pids cgroup of %s", id)
	return 0
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

// addKeys is a script that adds up to $1 keys to its user's keyring and
// says "ok", or how many it added and the errno that stopped it.
const addKeys = `python3 - "$1" <<'EOF'
import ctypes, errno, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
add_key = {"x86_64": 248, "aarch64": 217}[platform.machine()]
n, limit = 0, int(sys.argv[1])
while n < limit:
    name = ("osb-key-%d-%d" % (id(libc), n)).encode()
    if libc.syscall(add_key, b"user", name, b"x", 1, ctypes.c_int(-4)) < 0:
        print(n, errno.errorcode[ctypes.get_errno()])
        sys.exit()
    n += 1
print("ok")
EOF`

// TestSandboxCannotTakeTheKeyQuota: the kernel's key quota is per host
// uid, shared by the sandboxes of a rootless server and its user. The key
// syscalls are refused (EPERM) in every sandbox, as Docker's default
// seccomp profile refuses them in every container of the real server's
// runtime: a sandbox that tries to add many keys adds none, and another
// sandbox and the server's user lose nothing to it.
func TestSandboxCannotTakeTheKeyQuota(t *testing.T) {
	c := isolatedClient(t)
	greedy, other := c.create(nil), c.create(nil)
	took, _ := c.sh(greedy, "set -- 100000\n"+addKeys)
	if took != "0 EPERM" {
		t.Fatalf("a sandbox adding keys until refused: %q, want 0 EPERM (refused)", took)
	}
	if next, _ := c.sh(other, "set -- 1\n"+addKeys); next != "0 EPERM" {
		t.Errorf("another sandbox adding a key: %q, want 0 EPERM", next)
	}
	id, err := unix.AddKey("user", "osb-host-key", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
	if err != nil {
		t.Fatalf("the server's user adding a key after a sandbox took %q: %v", took, err)
	}
	unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
}
