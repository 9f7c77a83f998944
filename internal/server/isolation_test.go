//go:build linux

package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	osbclient "github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// These tests attack the sandbox boundary from inside, as code running in a
// sandbox (root there) would: every escape must fail.

// isolatedClient is a server whose sandboxes are isolated; the test is
// skipped where this machine cannot isolate them.
func isolatedClient(t *testing.T) *client {
	t.Helper()
	c := newClient(t)
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	return c
}

// sh runs a shell script in sandbox id through its execd and returns its
// stdout (lines joined with "\n") and exit code (-1: killed).
func (c *client) sh(id, script string) (string, int) {
	c.t.Helper()
	e := c.endpoint(id, 44772, true)
	body, _ := json.Marshal(map[string]any{"command": script})
	req, _ := http.NewRequest("POST", "http://"+e.Endpoint+"/command", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range e.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		c.t.Fatalf("command: status %d", resp.StatusCode)
	}
	r := osbclient.NewEventReader(resp.Body)
	var out []string
	for {
		ev, err := r.Next()
		if err != nil {
			c.t.Fatalf("command %q: stream ended without an end: %v (stdout %q)", script, err, out)
		}
		switch ev.Type {
		case osbclient.EventStdout:
			out = append(out, string(ev.Data))
		case osbclient.EventComplete:
			return strings.Join(out, "\n"), 0
		case osbclient.EventError:
			code := -1
			fmt.Sscan(ev.Error.Value, &code)
			return strings.Join(out, "\n"), code
		}
	}
}

func TestSandboxSeesNoHostFiles(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	a, b := c.create(nil), c.create(nil)
	if _, code := c.sh(b, "echo secret-of-b > /workspace/b-marker"); code != 0 {
		t.Fatal("writing in sandbox b failed")
	}
	sbB, _ := c.srv.Sandbox(b)
	hostPaths := []string{"/etc/shadow", "/etc/gshadow", "/work", "/etc/ssh", c.srv.DataDir(), sbB.FSDir(), "/etc/sudoers"}
	for _, p := range hostPaths {
		if out, code := c.sh(a, "ls -d "+p+" 2>&1 || echo absent"); !strings.HasSuffix(out, "absent") || code != 0 {
			t.Errorf("%s is visible in the sandbox: %q", p, out)
		}
	}
	if out, _ := c.sh(a, "cat /workspace/b-marker 2>&1; grep -rl secret-of-b /workspace /tmp /root /home 2>/dev/null; echo end"); out != "cat: /workspace/b-marker: No such file or directory\nend" {
		t.Errorf("sandbox a sees sandbox b's files: %q", out)
	}
	// What programs need is there, and /etc is the sandbox's own.
	out, code := c.sh(a, "head -1 /etc/os-release; grep -c . /etc/passwd; id -un; cat /proc/self/uid_map | tr -s ' '")
	if want, _ := os.ReadFile("/etc/os-release"); code != 0 || !strings.HasPrefix(out, strings.SplitN(string(want), "\n", 2)[0]+"\n2\nroot\n 0 ") {
		t.Errorf("sandbox /etc and identity: %q", out)
	}
	if strings.HasSuffix(out, " 0 0 4294967295") {
		t.Errorf("sandbox root is host root: %q", out)
	}
}

func TestSandboxCannotRemountOrEscapeItsRoot(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(nil)
	script := `mount -o remount,rw /usr 2>/dev/null && echo remounted; mount -o remount,bind,rw /usr 2>/dev/null && echo remounted-bind
touch /usr/osb-attack 2>/dev/null && echo wrote-usr; touch /etc/osb-attack 2>/dev/null && echo wrote-etc
umount -l /usr 2>/dev/null && echo unmounted
echo done`
	out, _ := c.sh(id, script)
	if strings.Contains(out, "remounted") || strings.Contains(out, "wrote-") || strings.Contains(out, "unmounted") || !strings.HasSuffix(out, "done") {
		t.Errorf("read-only parts written: %q", out)
	}
	if _, err := os.Stat("/usr/osb-attack"); err == nil {
		os.Remove("/usr/osb-attack")
		t.Fatal("the sandbox wrote the host's /usr")
	}
	// The classic chroot escape: chroot into a subdirectory while holding
	// the old root open, climb out with "..". It must end at the
	// sandbox's own root, never the host's.
	escape := `python3 -c "
import os
os.makedirs('/tmp/jail', exist_ok=True)
fd = os.open('/', os.O_RDONLY)
os.chroot('/tmp/jail')
os.fchdir(fd)
for _ in range(64): os.chdir('..')
os.chroot('.')
print(' '.join(sorted(os.listdir('/'))))
"`
	out, code := c.sh(id, escape)
	if code != 0 {
		t.Skipf("python3 unavailable in the sandbox: %q", out)
	}
	if !strings.Contains(" "+out+" ", " workspace ") || strings.Contains(" "+out+" ", " work ") {
		t.Errorf("chroot escape reached %q", out)
	}
}

// canary is in the environment of this test binary, and so of every server
// it runs, from before any test starts: set by one test, it would keep the
// test from running beside the others.
var canary = func() string {
	v := "osb-canary-" + randomWord()
	os.Setenv("OSB_ATTACK_CANARY", v)
	return v
}()

func TestSandboxSeesOnlyItsOwnProcesses(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(nil)
	out, _ := c.sh(id, "cat /proc/1/cmdline | tr '\\0' ' '; echo; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' >/tmp/all; grep -c -e "+canary[:8]+"''"+canary[8:]+" -e 'osb serv''er' /tmp/all; ls /proc | grep -c '^[0-9]'")
	lines := strings.Split(out, "\n")
	if len(lines) != 3 || lines[0] != "osb-sandbox-init " || lines[1] != "0" {
		t.Fatalf("sandbox /proc shows the host: %q", out)
	}
	var n int
	if fmt.Sscan(lines[2], &n); n > 8 {
		t.Errorf("sandbox sees %d processes", n)
	}
	// Nothing the server holds open reaches the sandbox's processes.
	if out, _ := c.sh(id, "ls /proc/self/fd | tr '\\n' ' '"); out != "0 1 2 3 " {
		t.Errorf("descriptors of a command: %q (ls has 3)", out)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", os.Getpid())); err != nil {
		t.Fatal(err)
	}
	if out, _ := c.sh(id, fmt.Sprintf("kill -0 %d 2>&1 && echo reached", os.Getpid())); strings.Contains(out, "reached") && os.Getpid() > 10 {
		t.Errorf("sandbox can signal a host pid: %q", out)
	}
}

func TestSandboxNetworkIsItsOwn(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			conn, err := host.Accept()
			if err != nil {
				return
			}
			conn.Write([]byte("HTTP/1.0 200 OK\r\n\r\nhost-service\n"))
			conn.Close()
		}
	}()
	hostPort := host.Addr().(*net.TCPAddr).Port
	_, serverPort, _ := net.SplitHostPort(c.srv.Addr())
	a, b := c.create(nil), c.create(nil)
	// b serves on 8000 of its own network.
	if _, code := c.sh(b, "cd /tmp && echo from-b > index.html && command -v python3 && (python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &)"); code != 0 {
		t.Skip("python3 unavailable in the sandbox")
	}
	eventually(t, time.Minute, func() bool {
		return c.do("GET", c.srv.URL()+"/sandboxes/"+b+"/proxy/8000/index.html", nil).status == 200
	})
	for _, port := range []string{itoa(hostPort), serverPort, "8000"} {
		if out, _ := c.sh(a, "(exec 3<>/dev/tcp/127.0.0.1/"+port+") 2>/dev/null && echo connected || echo refused"); out != "refused" {
			t.Errorf("sandbox a reached 127.0.0.1:%s: %q", port, out)
		}
	}
	// The server reaches each sandbox's own ports, and only those.
	if r := c.do("GET", c.srv.URL()+"/sandboxes/"+b+"/proxy/8000/index.html", nil); r.status != 200 || string(r.body) != "from-b\n" {
		t.Errorf("proxy to b's port: %d %q", r.status, r.body)
	}
	for _, sb := range []string{a, b} {
		if r := c.do("GET", c.srv.URL()+"/sandboxes/"+sb+"/proxy/"+itoa(hostPort)+"/", nil); r.status != 502 || bytes.Contains(r.body, []byte("host-service")) {
			t.Errorf("proxy route of %s reached the host's port: %d %q", sb, r.status, r.body)
		}
	}
	if r := c.do("GET", c.srv.URL()+"/sandboxes/"+a+"/proxy/8000/index.html", nil); r.status != 502 {
		t.Errorf("proxy route of a reached b's port: %d %q", r.status, r.body)
	}
	// Egress leaves only through the server's proxy, which reports so.
	out, _ := c.sh(a, "echo $HTTP_PROXY $HTTPS_PROXY $NO_PROXY; cat /etc/resolv.conf | grep nameserver")
	if out != "http://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1\nnameserver 127.0.0.1" {
		t.Errorf("proxy settings: %q", out)
	}
	if r := c.do("GET", c.srv.URL()+"/sandboxes/"+a+"/proxy/18080/policy", nil); !bytes.Contains(r.body, []byte(`"enforcementMode":"proxy"`)) {
		t.Errorf("policy: %s", r.body)
	}
}

func TestSandboxLimitsHoldAndTheServerStaysResponsive(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	if cg := sandbox.Cgroups(); !cg.Available {
		t.Skip("no cgroups for limits here: " + cg.Reason)
	}
	limits := map[string]any{"resourceLimits": map[string]string{"cpu": "500m", "memory": "96Mi", "pids": "64"}}
	id, other := c.create(limits), c.create(nil)
	// Metrics come from the sandbox's cgroup: its limit is its total.
	m := c.expect(200, c.do("GET", c.srv.URL()+"/sandboxes/"+id+"/proxy/44772/metrics", nil)).json(t)
	if m["mem_total_mib"] != float64(96) || m["mem_used_mib"].(float64) <= 0 {
		t.Errorf("metrics: %v", m)
	}
	hog := `python3 -c "
chunks = []
while True: chunks.append(bytearray(16 << 20))
"`
	if out, code := c.sh(id, hog); code == 0 {
		t.Fatalf("memory hog finished: %q", out)
	}
	// The hog was killed, not the sandbox's execd.
	if out, code := c.sh(id, "echo alive"); out != "alive" || code != 0 {
		t.Fatalf("after the memory hog: %q %d", out, code)
	}
	bomb := `python3 -c "
import os, time
n = 0
for i in range(300):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
    except OSError:
        pass
print(n)
"`
	out, _ := c.sh(id, bomb)
	var n int
	if fmt.Sscan(out, &n); n == 0 || n >= 64 {
		t.Errorf("processes forked by the bomb: %q", out)
	}
	start := time.Now()
	c.expect(200, c.do("GET", c.srv.URL()+"/health", nil))
	if out, code := c.sh(other, "echo other-fine"); out != "other-fine" || code != 0 {
		t.Errorf("other sandbox: %q %d", out, code)
	}
	t.Logf("server and other sandbox answered in %v during the fork bomb", time.Since(start))
	// Deleting the sandbox ends the bomb and removes its cgroups.
	sb, _ := c.srv.Sandbox(id)
	cgroups := cgroupDirs(t, id)
	if len(cgroups) == 0 {
		t.Fatal("no cgroup for the sandbox")
	}
	c.expect(204, c.do("DELETE", "/sandboxes/"+id, nil))
	if pids := sb.PIDs(); len(pids) != 0 {
		t.Errorf("processes left: %v", pids)
	}
	for _, d := range cgroups {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup left: %s", d)
		}
	}
}

// /dev/shm is 64 MiB, as on the real platform, not half the host's
// memory: writing more fails there.
func TestSandboxShmIsBounded(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	id := c.create(nil)
	out, code := c.sh(id, `df -k /dev/shm | awk 'NR == 2 { print $2 }'
head -c 80M /dev/zero >/dev/shm/fill 2>/dev/null && echo wrote-80M
rm -f /dev/shm/fill`)
	if out != "65536" || code != 0 {
		t.Errorf("/dev/shm: %q (exit %d), want a size of 65536 KiB and no 80 MiB written", out, code)
	}
}

// The reserve of the sandbox's init and execd (docs/security.md, limits)
// holds against the sandbox's root: it cannot move them into the cgroup
// of its own processes, by any cgroup file it can find or mount, and so a
// fork bomb that fills its process cap leaves execd serving.
func TestSandboxCannotMoveItsInitOrExecdIntoItsCap(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	if cg := sandbox.Cgroups(); !cg.Available {
		t.Skip("no cgroups for limits here: " + cg.Reason)
	}
	const cap = 64
	id := c.create(map[string]any{"resourceLimits": map[string]string{"cpu": "500m", "memory": "256Mi", "pids": itoa(cap)}})
	other := c.create(nil)
	// Every process and thread of the init and execd, written to every
	// cgroup file the sandbox can reach, mount, or mount in a cgroup
	// namespace of its own.
	attack := `cat >/tmp/move.sh <<'EOS'
victims=$(for p in /proc/[0-9]*; do
	case "$(tr '\0' ' ' <$p/cmdline 2>/dev/null)" in osb-sandbox-init*|osb-sandbox-agent*) ls $p/task;; esac
done)
for f in $(find "$@" \( -name cgroup.procs -o -name tasks \) 2>/dev/null); do
	for v in $victims; do echo $v >"$f" 2>/dev/null && echo "moved $v by $f"; done
done
EOS
bash /tmp/move.sh /run /sys /mnt
mkdir -p /tmp/cg
for fs in "cgroup -o pids" cgroup2; do
	mount -t $fs none /tmp/cg 2>/dev/null && { bash /tmp/move.sh /tmp/cg; umount /tmp/cg; }
	unshare -Cm bash -c "mount -t $fs none /tmp/cg 2>/dev/null && bash /tmp/move.sh /tmp/cg"
done
grep -E ':pids:|^0::' /proc/1/cgroup
true`
	out, code := c.sh(id, attack)
	t.Logf("attack: %q (exit %d)", out, code)
	if strings.Contains(out, "moved") {
		t.Errorf("the sandbox moved its init or execd: %s", out)
	}
	// The init's pids cgroup (v1), or its only one (v2), is the reserve.
	lines := strings.Split(out, "\n")
	where := lines[len(lines)-1]
	for _, l := range lines {
		if strings.Contains(l, ":pids:") {
			where = l
		}
	}
	if !strings.HasSuffix(where, "/agent") {
		t.Errorf("the init's cgroup is not the reserved one: %q", out)
	}
	// A fork bomb whose processes keep refilling every slot that frees.
	bomb := `setsid python3 -c "
import os, time
while True:
    try:
        if os.fork() == 0:
            while True:
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.05)
    except OSError:
        time.sleep(0.05)
" </dev/null >/dev/null 2>&1 &`
	if _, code := c.sh(id, bomb); code != 0 {
		t.Fatalf("starting the bomb: exit %d", code)
	}
	full := eventually(t, 2*time.Minute, func() bool { return procsCount(t, id) >= cap })
	if !full {
		t.Fatalf("the bomb never filled the cap: %d processes", procsCount(t, id))
	}
	if out, code := c.sh(id, "echo alive"); out != "alive" || code != 0 {
		t.Errorf("execd during the fork bomb: %q %d", out, code)
	}
	c.expect(200, c.do("GET", c.srv.URL()+"/health", nil))
	if out, code := c.sh(other, "echo other-fine"); out != "other-fine" || code != 0 {
		t.Errorf("other sandbox: %q %d", out, code)
	}
	c.expect(204, c.do("DELETE", "/sandboxes/"+id, nil))
}

// procsCount is how many processes the cgroup of sandbox id's own
// processes (procs/ of its pids cgroup) holds.
func procsCount(t *testing.T, id string) int {
	t.Helper()
	for _, d := range cgroupDirs(t, id) {
		if b, err := os.ReadFile(filepath.Join(d, "procs", "pids.current")); err == nil {
			n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return n
		}
	}
	return 0
}

// cgroupDirs finds the cgroup directories named id.
func cgroupDirs(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == id {
			out = append(out, p)
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

func TestServerCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	c := isolatedClient(t)
	ids := []string{c.create(nil), c.create(nil)}
	var pids []int
	var cgroups []string
	for _, id := range ids {
		c.sh(id, "sleep 1000 >/dev/null 2>&1 &")
		sb, _ := c.srv.Sandbox(id)
		pids = append(pids, sb.PIDs()...)
		cgroups = append(cgroups, cgroupDirs(t, id)...)
	}
	if err := c.srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if !bytes.Contains(b, []byte(") Z ")) {
				t.Errorf("process %d left: %s", pid, b)
			}
		}
	}
	for _, d := range cgroups {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup left: %s", d)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(c.srv.DataDir(), "sandboxes")); len(entries) != 0 {
		t.Errorf("sandbox directories left: %v", entries)
	}
}

func randomWord() string { return fmt.Sprintf("%x", time.Now().UnixNano()) }
