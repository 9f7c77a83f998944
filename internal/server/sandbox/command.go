package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"sync"
	"syscall"
)

// CommandSpec describes a process to run inside a sandbox.
type CommandSpec struct {
	Shell string            // shell text, run with `bash -c` (sh when bash is missing); exclusive with Argv
	Argv  []string          // program and arguments, not shell-expanded; PATH lookup happens inside the sandbox
	Cwd   string            // sandbox path; "" means /workspace
	Env   map[string]string // added to (and overriding) the sandbox environment
	UID   *uint32           // run as this user; nil keeps the server's user
	GID   *uint32           // group; nil with UID set means the user's primary group (else GID=UID)
}

// EgressProxyAddr is where, in its own network, an isolated sandbox finds
// the server's egress proxy (see ListenInside).
const (
	EgressProxyAddr = "127.0.0.1:3128"
	EgressProxyURL  = "http://" + EgressProxyAddr
)

// oomFirst runs a program as the OOM killer's first choice: a sandbox that
// runs out of memory loses what used it, never its init or agent (which
// keep the default score). Raising the score needs no privilege.
// Before the program, it waits for a line on descriptor 3: the one who
// started it sends it once the process is in the cgroup of the sandbox's
// processes (see startGated), and without it the program never runs.
const oomFirst = `{ echo 1000 >/proc/self/oom_score_adj; } 2>/dev/null; read -r ok <&3 || exit 126; exec 3<&-; exec "$@"`

// gated tells whether cmd runs through oomFirst.
func gated(cmd *exec.Cmd) bool {
	return len(cmd.Args) > 2 && cmd.Args[1] == "-c" && cmd.Args[2] == oomFirst
}

// startGated starts cmd, has move put it into the cgroup of the sandbox's
// processes, and only then lets it run (oomFirst). One that cannot be
// moved is killed and reaped. A program without the wrapper (an image
// without a shell) is moved once started.
func startGated(cmd *exec.Cmd, move func(pid int) error) error {
	var gate *os.File
	if gated(cmd) {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		defer w.Close()
		gate = w
		cmd.ExtraFiles = append([]*os.File{r}, cmd.ExtraFiles...)
		err = cmd.Start()
		r.Close()
		if err != nil {
			return err
		}
	} else if err := cmd.Start(); err != nil {
		return err
	}
	err := move(cmd.Process.Pid)
	if err == nil && gate != nil {
		_, err = gate.WriteString("\n")
		if errors.Is(err, syscall.EPIPE) {
			// The wrapper ended before its gate opened (a timeout or a
			// kill got there first), so it ran nothing of its own: how it
			// ended is Wait's to tell, not a failure to confine it.
			return nil
		}
	}
	if err != nil {
		kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("confining the process: %w", err)
	}
	return nil
}

// StartCommand starts a command that Command prepared. Inside a sandbox,
// the init first moves it into the cgroup of the sandbox's processes,
// under their cap (confine_linux.go); until then it runs nothing of its
// own.
func (s *Sandbox) StartCommand(cmd *exec.Cmd) error {
	if !s.inside {
		return cmd.Start()
	}
	return startGated(cmd, s.initLink.move)
}

// initLink is the agent's socket to the init, which moves processes into
// the cgroup of the sandbox's processes on its request.
type initLink struct {
	mu sync.Mutex
	f  *os.File
}

// move asks the init to move pid; nil link: there is no init to ask.
func (l *initLink) move(pid int) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.WriteString(strconv.Itoa(pid)); err != nil {
		return err
	}
	buf := make([]byte, 256)
	n, err := l.f.Read(buf)
	if err != nil {
		return err
	}
	if reply := string(buf[:n]); reply != "ok" {
		return errors.New(reply)
	}
	return nil
}

// hasShell tells whether the sandbox has the /bin/sh that oomFirst needs:
// an image without one (distroless) runs its programs directly, in the
// cgroup of the init and agent, with the usual OOM score.
func hasShell() bool {
	_, err := os.Stat("/bin/sh")
	return err == nil
}

// defaultPath is PATH inside an isolated sandbox, as in a typical image.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// cdWrapper runs inside the sandbox: nsenter cannot resolve a working
// directory in the target's mount namespace, so the shell does it.
const cdWrapper = `cd -- "$0" || exit 1; exec "$@"`

// cgroupJoin writes its own pid into each cgroup.procs given before "--",
// then execs the rest.
const cgroupJoin = `for f; do shift; [ "$f" = -- ] && exec "$@"; echo $$ >"$f" || exit 126; done; exit 126`

// joined is argv run by a process that first joins the sandbox's cgroup
// (when it has one), so that it and all it starts are members from their
// first instruction.
func (s *Sandbox) joined(argv []string) []string {
	join := s.cg.joinFiles()
	if len(join) == 0 || s.inside {
		return argv
	}
	return append(append(append([]string{"/bin/sh", "-c", cgroupJoin, "osb-join"}, join...), "--"), argv...)
}

// asUser is argv run as uid and gid, with no supplementary groups (as
// runAs), by setpriv.
func asUser(argv []string, uid, gid uint32) ([]string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, errors.New("sandbox: running a command as another user needs setpriv (util-linux)")
	}
	ids := []string{setpriv, "--reuid", strconv.Itoa(int(uid)), "--regid", strconv.Itoa(int(gid)), "--clear-groups", "--"}
	return append(ids, argv...), nil
}

// Command prepares a process inside the sandbox. The caller sets Stdin,
// Stdout and Stderr, then Starts and Waits as with any exec.Cmd. The process
// gets its own process group (its pid); cancelling ctx kills that group.
// Whatever it spawns belongs to the sandbox: Kill ends it all. The server
// runs commands through the agent inside an isolated sandbox (its own
// Command, a plain child there); from the host, nsenter enters the init's
// namespaces, for callers without an agent.
func (s *Sandbox) Command(ctx context.Context, spec CommandSpec) (*exec.Cmd, error) {
	argv, err := spec.argv()
	if err != nil {
		return nil, err
	}
	a := s.anchor.Load()
	select {
	case <-s.done:
		return nil, ErrGone
	default:
	}
	if a == nil {
		return nil, errors.New("sandbox: not started")
	}
	cwd := cmp.Or(spec.Cwd, s.workDir)
	if spec.UID == nil && s.user != nil {
		spec.UID, spec.GID = &s.user.UID, &s.user.GID
	}
	uid, gid, err := spec.ids()
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	attr := groupAttr(false)
	if s.isolated {
		args := []string{"--target", strconv.Itoa(a.initPID), "--user", "--mount", "--pid", "--uts", "--ipc", "--net", "--root", "--wd"}
		if rootless {
			// The server's uid is the sandbox's root already; nsenter's
			// setgroups would fail where setgroups is denied.
			args = append(args, "--preserve-credentials")
		}
		if uid != nil && (!rootless || *uid != 0 || *gid != 0) {
			args = append(args, "--setuid", strconv.Itoa(int(*uid)), "--setgid", strconv.Itoa(int(*gid)))
		}
		args = append(append(args, "--", "/bin/sh", "-c", cdWrapper, cwd), argv...)
		// Into the sandbox's cgroup before nsenter forks: its limits
		// hold, and members finds the command there.
		j := s.joined(append([]string{"nsenter"}, args...))
		cmd = exec.CommandContext(ctx, j[0], j[1:]...)
	} else {
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
		switch {
		case cmd.Err != nil: // Start reports it
		case s.inside:
			if hasShell() {
				cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", oomFirst, argv[0], cmd.Path}, argv[1:]...)...)
			}
		case len(s.cg.joinFiles()) > 0:
			prog := append([]string{cmd.Path}, argv[1:]...)
			if uid != nil {
				// Joining needs the server's rights, so the user
				// changes after it.
				if prog, err = asUser(prog, *uid, *gid); err != nil {
					return nil, err
				}
				uid = nil
			}
			j := s.joined(prog)
			cmd = exec.CommandContext(ctx, j[0], j[1:]...)
		}
		cmd.Dir = s.hostPath(cwd)
		if uid != nil {
			runAs(attr, *uid, *gid)
		}
	}
	cmd.Env = s.processEnv(spec.Env)
	cmd.SysProcAttr = attr
	DefaultSignals()
	cmd.Cancel = func() error { kill(-cmd.Process.Pid, syscall.SIGKILL); return nil }
	return cmd, nil
}

func (spec CommandSpec) argv() ([]string, error) {
	switch {
	case spec.Shell != "" && len(spec.Argv) > 0:
		return nil, errors.New("sandbox: Shell and Argv are exclusive")
	case spec.Shell != "":
		return []string{shellPath(), "-c", spec.Shell}, nil
	case len(spec.Argv) > 0 && spec.Argv[0] != "":
		return spec.Argv, nil
	}
	return nil, errors.New("sandbox: empty command")
}

func (spec CommandSpec) ids() (uid, gid *uint32, err error) {
	if spec.UID == nil {
		if spec.GID != nil {
			return nil, nil, errors.New("sandbox: GID requires UID")
		}
		return nil, nil, nil
	}
	uid, gid = spec.UID, spec.GID
	if gid == nil {
		g := *uid
		if u, err := user.LookupId(strconv.Itoa(int(*uid))); err == nil {
			if n, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
				g = uint32(n)
			}
		}
		gid = &g
	}
	return uid, gid, nil
}

var shellOnce = sync.OnceValue(func() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
})

// shellPath is bash where the host has it (the host's programs are the
// sandbox's programs, isolated or not), like execd.
func shellPath() string { return shellOnce() }

// processEnv is the environment of every sandbox process: a container-like
// base (never the server's own environment, which may hold the API key), the
// sandbox env, the entries of its EXECD_ENVS file (envfile.go), then extra.
// OPENSANDBOX_ID is always last: it marks the process.
func (s *Sandbox) processEnv(extra map[string]string) []string {
	env := map[string]string{}
	if s.isolated || s.inside {
		env["PATH"] = defaultPath
		env["HOME"] = "/root"
		env["HOSTNAME"] = hostname(s.id)
		env["EXECD_ENVS"] = EnvFile
		// The sandbox's network has nothing but its loopback: HTTP(S) goes
		// out through the server's egress proxy, listening there.
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
			env[k] = EgressProxyURL
		}
		env["NO_PROXY"], env["no_proxy"] = "localhost,127.0.0.1", "localhost,127.0.0.1"
		// TLS clients trust the proxy's CA (for intercepted HTTPS) as
		// well as the system's roots, whichever variable they read.
		for _, k := range []string{"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO"} {
			env[k] = CABundle
		}
	} else {
		env["PATH"] = os.Getenv("PATH")
		if env["PATH"] == "" {
			env["PATH"] = defaultPath
		}
		env["HOME"] = s.hostPath("/workspace")
		env["TMPDIR"] = s.hostPath("/tmp")
		env["EXECD_ENVS"] = s.hostPath(EnvFile)
	}
	for k, v := range s.env {
		env[k] = v
	}
	for _, m := range []map[string]string{s.fileEnv(env), extra} {
		for k, v := range m {
			env[k] = v
		}
	}
	delete(env, "OPENSANDBOX_ID")
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return append(out, s.marker())
}
