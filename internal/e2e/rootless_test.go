//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobodyDir makes a directory everyone may enter (0755 up to the root),
// holding a copy of the osb binary, and a home in it that nobody (65534)
// owns. It returns the home and the binary.
func nobodyDir(t *testing.T) (home, bin string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "osb-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "osb")
	// cp writes the copy, not this process: a file this process had open
	// for writing would be inherited, for an instant, by every child a
	// parallel test forks, and exec'ing it then fails (text file busy).
	if out, err := exec.Command("cp", buildOsb(t), bin).CombinedOutput(); err != nil {
		t.Fatalf("copying osb: %v\n%s", err, out)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	return home, bin
}

// osb server run by an ordinary user (nobody) isolates its sandboxes in
// rootless user namespaces: root inside, the host's files and network out
// of sight, the proxy route and files API working, nothing left on kill.
func TestRootlessServerIsolates(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run osb as another user")
	}
	for _, tool := range []string{"/usr/bin/python3", "/usr/bin/curl"} {
		if _, err := os.Stat(tool); err != nil {
			t.Skip("needs " + tool + " in the sandbox")
		}
	}
	home, bin := nobodyDir(t)
	secret := filepath.Join(filepath.Dir(home), "host-only.txt")
	if err := os.WriteFile(secret, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	const key = "rootless-key"
	srv := launchServerAs(t, nobody, bin, home, key, "--data-dir", filepath.Join(home, "data"), "--allow-unlimited")
	if !strings.Contains(srv.logs.String(), "isolated: true") {
		t.Fatalf("the server as nobody does not isolate:\n%s", srv.logs.String())
	}
	env := clientEnv(t.TempDir(), srv.addr, key)
	id := createSandbox(t, bin, env)
	run := func(script string) string {
		t.Helper()
		return osb(t, bin, env, "command", "run", id, "--", "sh", "-c", script).expect(t, 0, script).stdout
	}

	if got := run("id -u; id -g"); got != "0\n0\n" {
		t.Errorf("ids inside: %q, want root", got)
	}
	hidden := fmt.Sprintf("for p in %s /work %s; do test -e $p && echo seen $p; done; echo checked", secret, home)
	if got := run(hidden); got != "checked\n" {
		t.Errorf("host files visible in the sandbox: %q", got)
	}

	// A loopback listener of the host is not the sandbox's loopback.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	probe := "bash -c 'echo x >/dev/tcp/127.0.0.1/" + port + "' 2>/dev/null && echo reached || echo unreachable"
	if got := run(probe); got != "unreachable\n" {
		t.Errorf("the host's loopback from the sandbox: %q", got)
	}

	// The egress proxy listens inside: a request that is not for a proxy
	// gets its answer.
	egress := "curl -s --noproxy '*' http://127.0.0.1:3128/"
	if got := run(egress); !strings.HasPrefix(got, "osb egress proxy: send absolute http:// URLs") {
		t.Errorf("127.0.0.1:3128 in the sandbox: %q", got)
	}

	// Files API in, a port inside served through the proxy route out.
	local := filepath.Join(t.TempDir(), "index.html")
	os.WriteFile(local, []byte("served from inside\n"), 0o644)
	osb(t, bin, env, "cp", local, id+":/workspace/").expect(t, 0, "cp")
	run("cd /workspace && (python3 -m http.server 8080 >/dev/null 2>&1 &) && for i in $(seq 100); do bash -c 'echo >/dev/tcp/127.0.0.1/8080' 2>/dev/null && exit 0; sleep 0.1; done; exit 1")
	if got := proxyGet(t, bin, env, id, "8080", "/index.html"); got != "served from inside\n" {
		t.Errorf("proxy route to port 8080 inside: %q", got)
	}

	// What the sandbox made read-only is still removed with it.
	run("mkdir -p /workspace/ro/sub && echo x >/workspace/ro/sub/f && chmod 500 /workspace/ro/sub /workspace/ro")

	before := descendants(srv.cmd.Process.Pid)
	if len(before) < 3 {
		t.Fatalf("sandbox processes not found under the server: %v", before)
	}
	osb(t, bin, env, "sandbox", "kill", id).expect(t, 0, "kill")
	if !waitFor(time.Minute, func() bool { return len(descendants(srv.cmd.Process.Pid)) == 0 }) {
		t.Errorf("processes left after kill: %v", descendants(srv.cmd.Process.Pid))
	}
	if _, err := os.Stat(filepath.Join(home, "data", "sandboxes", id)); err == nil {
		t.Errorf("sandbox directory left after kill:\n%s", srv.logs.String())
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM: %v\n%s", err, srv.logs.String())
	}
}

// proxyGet fetches path from a sandbox port through the server's proxy
// route, with the headers `osb sandbox endpoint` gives.
func proxyGet(t *testing.T, bin string, env []string, id, port, path string) string {
	t.Helper()
	out := osb(t, bin, env, "sandbox", "endpoint", id, "-p", port, "-o", "json", "--use-server-proxy").expect(t, 0, "endpoint")
	var ep struct {
		Endpoint string
		Headers  map[string]string
	}
	if err := json.Unmarshal([]byte(out.stdout), &ep); err != nil {
		t.Fatalf("endpoint: %v %s", err, out.stdout)
	}
	req, _ := http.NewRequest("GET", "http://"+ep.Endpoint+path, nil)
	for k, v := range ep.Headers {
		req.Header.Set(k, v)
	}
	client := http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", ep.Endpoint+path, resp.StatusCode, b)
	}
	return string(b)
}

// descendants lists the live (not zombie) processes below pid.
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so parse after ")".
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		parent[p], _ = strconv.Atoi(f[1])
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// The tour (README's first command ends with it) works for an ordinary
// user: isolated sandboxes, and where the user has no cgroups to limit them
// the tour says why and accepts sandboxes without limits.
func TestTourAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the tour as another user")
	}
	home, bin := nobodyDir(t)
	tour := filepath.Join(filepath.Dir(bin), "tour")
	b, err := os.ReadFile("../../scripts/tour")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tour, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", tour)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Dir(bin) + ":/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + home}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tour as nobody: %v\n%s", err, out)
	}
	for _, want := range []string{"$ osb version", "isolated by user, mount, pid, uts, ipc and network namespaces", "hello from the sandbox", "copied in"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the tour as nobody did not show %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "note: sandboxes cannot get resource limits here (") &&
		!strings.Contains(string(out), "restarting osb server with --allow-unlimited") {
		t.Errorf("the tour said limits are unavailable but did not say what it does about it:\n%s", out)
	}
}
