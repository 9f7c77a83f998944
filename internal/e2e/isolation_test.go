//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A killed server (SIGKILL: no cleanup at all) leaves no sandbox process
// running, and the next server on its data directory removes the rest; a
// server stopped with SIGTERM leaves nothing.
func TestKilledServerLeavesNothingAfterRestart(t *testing.T) {
	t.Parallel()
	bin := rootOsb(t)
	home, data := t.TempDir(), t.TempDir()
	const key = "e2e-key"
	first := launchServer(t, bin, home, key, "--data-dir", data)
	env := clientEnv(home, first.addr, key)
	id := createSandbox(t, bin, env)
	osb(t, bin, env, "command", "run", id, "--", "sh", "-c", "sleep 1000 >/dev/null 2>&1 &").expect(t, 0)
	if len(processesOf(id)) < 2 {
		t.Fatalf("sandbox processes not found by their cgroup: %v", processesOf(id))
	}
	cgroups := cgroupsNamed(id)

	first.cmd.Process.Kill()
	<-first.done
	first.cmd.Wait()
	if !waitFor(time.Minute, func() bool { return len(processesOf(id)) == 0 }) {
		t.Errorf("sandbox processes outlived the killed server: %v", processesOf(id))
	}
	if _, err := os.Stat(filepath.Join(data, "sandboxes", id)); err != nil {
		t.Fatalf("the killed server's sandbox directory is not there to clean: %v", err)
	}

	second := launchServer(t, bin, home, key, "--data-dir", data)
	if _, err := os.Stat(filepath.Join(data, "sandboxes", id)); err == nil {
		t.Errorf("sandbox directory left after restart")
	}
	for _, d := range cgroups {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup left after restart: %s", d)
		}
	}

	env = clientEnv(home, second.addr, key)
	id2 := createSandbox(t, bin, env)
	osb(t, bin, env, "command", "run", id2, "--", "sh", "-c", "sleep 1000 >/dev/null 2>&1 &").expect(t, 0)
	pids := processesOf(id2)
	serverPid := second.cmd.Process.Pid
	if err := second.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, second.logs.String())
	}
	for _, pid := range pids {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(b, []byte(") Z ")) {
			t.Errorf("process %d left after SIGTERM: %s", pid, b)
		}
	}
	if left := cgroupsNamed(strconv.Itoa(serverPid)); len(left) > 0 {
		t.Errorf("cgroups left after SIGTERM: %v", left)
	}
	if entries, _ := os.ReadDir(filepath.Join(data, "sandboxes")); len(entries) != 0 {
		t.Errorf("sandbox directories left after SIGTERM: %v", entries)
	}
}

// An isolated sandbox's init and execd run the sandbox program osb
// carries (cmd/osb-sandbox), from memory, not osb itself: the program
// the host shows for each is that memory file.
func TestSandboxesRunTheSandboxProgram(t *testing.T) {
	t.Parallel()
	bin := rootOsb(t)
	home := t.TempDir()
	const key = "e2e-key"
	srv := launchServer(t, bin, home, key, "--data-dir", t.TempDir())
	env := clientEnv(home, srv.addr, key)
	id := createSandbox(t, bin, env)
	roles := map[string]string{}
	for _, pid := range processesOf(id) {
		argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		roles[string(bytes.SplitN(argv, []byte{0}, 2)[0])] = exe
	}
	for _, role := range []string{"osb-sandbox-init", "osb-sandbox-agent"} {
		if exe := roles[role]; !strings.HasPrefix(exe, "/memfd:osb-sandbox") {
			t.Errorf("%s runs %q, want the memfd osb-sandbox (processes: %v)", role, exe, roles)
		}
	}
}

// processesOf lists the host pids whose cgroup path names the sandbox.
// rootOsb builds osb for a test of isolated sandboxes, which need root;
// it skips under -short and without root.
func rootOsb(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("isolated sandboxes need root")
	}
	return buildOsb(t)
}

func processesOf(id string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cgroup"); err == nil && bytes.Contains(b, []byte("/"+id)) {
			out = append(out, pid)
		}
	}
	return out
}

// cgroupsNamed finds the cgroup directories called name.
func cgroupsNamed(name string) []string {
	var out []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == name {
			out = append(out, p)
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

func waitFor(d time.Duration, f func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return f()
}

// Where the kernel refuses unprivileged user namespaces, a server without
// root cannot isolate sandboxes: it refuses to start, unless told to run
// them unisolated. The test makes such a kernel with a user namespace of
// its own allowing no nested one, and runs the server as nobody in it.
func TestServerRefusesWithoutUserNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run osb as another user")
	}
	dir, bin := nobodyDir(t)
	ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}}
	nobody := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: ids, GidMappings: ids,
		GidMappingsEnableSetgroups: true}
	const asNobody = `echo 0 >/proc/sys/user/max_user_namespaces && exec setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"`
	env := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_API_KEY=k"}

	cmd := exec.Command("/bin/sh", "-c", asNobody, "sh", bin, "server", "--listen", "127.0.0.1:0")
	cmd.Env, cmd.SysProcAttr = env, nobody
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "sandboxes cannot be isolated on this host (osb server is not running as root and this kernel refuses it unprivileged user namespaces") ||
		!strings.Contains(string(out), "refusing to start") || !strings.Contains(string(out), "--unsafe-no-isolation") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}

	cmd = exec.Command("/bin/sh", "-c", asNobody, "sh", bin, "server", "--listen", "127.0.0.1:0", "--unsafe-no-isolation")
	cmd.Env, cmd.SysProcAttr = env, nobody
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.HasPrefix(sc.Text(), "osb server listening on") {
			break
		}
	}
	if len(seen) < 2 || !strings.HasPrefix(seen[len(seen)-2], "WARNING: sandboxes are NOT isolated") {
		t.Errorf("--unsafe-no-isolation as nobody: %q", seen)
	}
}
