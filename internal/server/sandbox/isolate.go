package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Isolation tells whether sandboxes can run in their own namespaces here.
type Isolation struct {
	Available bool
	Reason    string // why not, when unavailable
}

var (
	probeOnce   sync.Once
	probeResult Isolation
)

// Probe checks once per process whether util-linux unshare/nsenter can create
// mount+pid+uts namespaces (Linux, CAP_SYS_ADMIN). The result is cached.
func Probe() Isolation {
	probeOnce.Do(func() { probeResult = probe() })
	return probeResult
}

func probe() Isolation {
	for _, tool := range []string{"unshare", "nsenter", "mount", "chroot", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			return Isolation{Reason: tool + " not found"}
		}
	}
	dir, err := os.MkdirTemp("", "osb-probe-")
	if err != nil {
		return Isolation{Reason: err.Error()}
	}
	defer os.Remove(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The tmpfs lives only in the private mount namespace; the host never sees it.
	out, err := exec.CommandContext(ctx, "unshare", "--mount", "--pid", "--uts", "--fork",
		"--propagation", "private", "sh", "-c", `mount -t tmpfs osb-probe "$0"`, dir).CombinedOutput()
	if err != nil {
		return Isolation{Reason: strings.TrimSpace(fmt.Sprintf("unshare failed: %v %s", err, out))}
	}
	return Isolation{Available: true}
}

// anchor is the first process of a sandbox. Isolated: `unshare`, whose child
// is pid 1 of the sandbox pid namespace (killing it kills the namespace).
// Unisolated: a shell that started the entrypoint and reaps.
type anchor struct {
	cmd      *exec.Cmd
	exited   chan struct{}
	isolated bool
	initPID  int    // host pid of the sandbox init (isolated) or of the anchor shell
	pidNS    string // isolated: the sandbox pid namespace, as readlink /proc/PID/ns/pid
	marker   string // unisolated: the environment entry every sandbox process carries
}

// initScript runs as pid 1 of the new namespaces. It builds the sandbox root
// on a tmpfs at $1: every top-level host directory bind-mounted read-only,
// except /workspace, /tmp and /root, which come from the sandbox fs dir $2;
// fresh /proc for the new pid namespace. Then it chroots, reports "ready" on
// fd 3, starts the entrypoint and stays as the reaping init.
const initScript = `set -e
R=$1; F=$2; H=$3; shift 3
mount --make-rprivate /
mount -t tmpfs -o mode=0755 osb-root "$R"
for src in /*; do
  name=${src#/}
  case "$name" in proc|sys|dev|tmp|workspace|root|'*') continue ;; esac
  if [ -L "$src" ]; then ln -s "$(readlink "$src")" "$R/$name"
  elif [ -d "$src" ]; then
    mkdir "$R/$name"; mount --rbind "$src" "$R/$name"
    mount -o remount,bind,ro "$R/$name" 2>/dev/null || true
  fi
done
for d in workspace tmp root; do mkdir "$R/$d"; mount --bind "$F/$d" "$R/$d"; done
mkdir "$R/proc" "$R/dev" "$R/sys"
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount --rbind /sys "$R/sys"
hostname "$H" 2>/dev/null || true
mount -o remount,ro osb-root "$R" 2>/dev/null || true
exec chroot "$R" /bin/sh -c 'echo ready >&3; exec 3>&-; cd /workspace; "$@" </dev/null & while :; do wait; sleep 1; done' osb-init "$@"
`

// plainScript is the anchor of an unisolated sandbox.
const plainScript = `cd "$0" || exit 1; "$@" </dev/null & while :; do wait; sleep 1; done`

func startAnchor(s *Sandbox, entrypoint []string, log *os.File) (*anchor, error) {
	if s.isolated {
		return startIsolated(s, entrypoint, log)
	}
	return startPlain(s, entrypoint, log)
}

func startPlain(s *Sandbox, entrypoint []string, log *os.File) (*anchor, error) {
	args := append([]string{"-c", plainScript, filepath.Join(s.FSDir(), "workspace")}, entrypoint...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Env = s.processEnv(nil)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = groupAttr(true)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	a := &anchor{cmd: cmd, exited: make(chan struct{}), initPID: cmd.Process.Pid, marker: s.marker()}
	go func() { cmd.Wait(); close(a.exited) }()
	return a, nil
}

func startIsolated(s *Sandbox, entrypoint []string, log *os.File) (*anchor, error) {
	ready, readyW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer ready.Close()
	args := []string{"--mount", "--pid", "--uts", "--fork", "--kill-child", "--propagation", "private",
		"/bin/sh", "-c", initScript, "osb-init", filepath.Join(s.dir, "root"), s.FSDir(), hostname(s.id)}
	cmd := exec.Command("unshare", append(args, entrypoint...)...)
	cmd.Env = s.processEnv(nil)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{readyW}
	// Pdeathsig + --kill-child: if the server dies, the whole namespace dies.
	cmd.SysProcAttr = groupAttr(true)
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		return nil, err
	}
	a := &anchor{cmd: cmd, exited: make(chan struct{}), isolated: true}
	go func() { cmd.Wait(); close(a.exited) }()
	if err := a.awaitReady(ready, 10*time.Second); err != nil {
		kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-a.exited
		return nil, fmt.Errorf("sandbox setup failed: %w: %s", err, tail(s.LogPath()))
	}
	return a, nil
}

func (a *anchor) awaitReady(r *os.File, timeout time.Duration) error {
	r.SetReadDeadline(time.Now().Add(timeout))
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || line != "ready\n" {
		return fmt.Errorf("no ready signal (%v)", err)
	}
	pid, err := childOf(a.cmd.Process.Pid)
	if err != nil {
		return err
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return err
	}
	a.initPID, a.pidNS = pid, ns
	return nil
}

// childOf returns the only child of pid (unshare --fork has exactly one).
func childOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			return strconv.Atoi(f[0])
		}
	}
	for _, p := range listPIDs() {
		if st, err := readStat(p); err == nil && st.ppid == pid {
			return p, nil
		}
	}
	return 0, errors.New("sandbox init process not found")
}

func hostname(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// tail returns the last bytes of a log file, for error messages.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 512 {
		b = b[len(b)-512:]
	}
	return strings.TrimSpace(string(b))
}

// mountsUnder lists mount points at or below dir in this process's mount namespace.
func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// unescapeMount undoes the octal escapes (\040 for space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
