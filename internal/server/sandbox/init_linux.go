package sandbox

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The sandbox init. The server starts its own binary again (/proc/self/exe)
// in new user, mount, pid, uts, ipc and network namespaces with initEnv set;
// this package's init function sees the variable and runs runInit instead
// of the program's main, so every binary that links this package (osb, and
// the test binaries that start servers) can be a sandbox init.

func init() {
	switch os.Getenv(initEnv) {
	case "":
		return
	case "probe":
		os.Exit(0)
	case "hold":
		// Keeps its user namespace alive until the server closes stdin.
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Unsetenv(initEnv)
	// A collection while the sandbox is built would find next to nothing
	// to free, and the create waits for the build.
	debug.SetGCPercent(-1)
	if err := runInit(); err != nil {
		failed(err)
	}
	// What building the sandbox allocated is garbage now, and the heap
	// is too small for a collection to come by itself: the init would
	// keep it for the sandbox's whole life.
	debug.SetGCPercent(100)
	debug.FreeOSMemory()
	reapForever(entrypointPID)
}

// failed tells the server why the init could not build the sandbox, on
// the ready pipe, where it waits (awaitReady), and ends the init.
func failed(err error) {
	msg := "osb sandbox init: " + strings.ReplaceAll(err.Error(), "\n", " ")
	if _, werr := unix.Write(fdReady, []byte(readyFailed+msg+"\n")); werr != nil {
		fmt.Fprintln(os.Stderr, msg)
	}
	os.Exit(1)
}

// runInit builds the sandbox and starts its agent and entrypoint.
func runInit() error {
	// Catch (not ignore: ignored signals stay ignored in every process the
	// init starts) what would otherwise end it: it ends only when killed.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	go func() {
		for range sigs {
		}
	}()
	warmDecoder()
	// The root is built while the server readies the rest of the
	// configuration (or no request has come yet).
	early, err := readEarly()
	if err != nil {
		return err
	}
	r, err := buildRoot(early)
	if err != nil {
		return err
	}
	passed, err := receivePassed()
	if err != nil {
		return err
	}
	var cfg initConfig
	cf := os.NewFile(fdConfig, "config")
	dec := json.NewDecoder(cf)
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("reading configuration: %w", err)
	}
	if err := cfg.usePassed(passed); err != nil {
		return err
	}
	openReserve(cfg)
	if cfg.NoFile > 0 {
		// Lowered here, before anything starts: every process inherits it.
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: cfg.NoFile, Max: cfg.NoFile}); err != nil {
			return fmt.Errorf("open files limit: %w", err)
		}
	}
	if cfg.Rootless {
		shareKernelQuotas()
	}
	keep := []int{fdReady}
	for _, b := range cfg.Binds {
		if b.FD > 0 {
			keep = append(keep, b.FD)
		}
	}
	if cfg.Agent != nil {
		keep = append(keep, cfg.Agent.ListenerFD)
	}
	CloseOnExecExcept(keep...)
	if err := finishRoot(r, cfg, early.Rootfs == nil); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte(cfg.Hostname)); err != nil {
		return fmt.Errorf("hostname: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	openNetwork()
	if cfg.SocketsFD > 0 {
		go serveSockets(cfg.SocketsFD)
	}
	// Every process of the sandbox is a child of the init, and takes its
	// cgroup: none starts before the server has put the init in.
	if _, err := io.Copy(io.Discard, io.MultiReader(dec.Buffered(), cf)); err != nil {
		return fmt.Errorf("waiting for the cgroup: %w", err)
	}
	cf.Close()
	if err := refuseKeys(); err != nil {
		return err
	}
	// Programs are found where the sandbox's own PATH (an image's) says.
	os.Setenv("PATH", envPath(cfg.Env))
	if cfg.Agent != nil {
		// Kept for the next agent, but not inherited by anything else.
		syscall.CloseOnExec(cfg.Agent.ListenerFD)
		ln := os.NewFile(uintptr(cfg.Agent.ListenerFD), "listener")
		pid, err := startAgent(cfg, ln, 0)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		agent = &agentWatch{cfg: cfg, ln: ln, pid: pid}
	}
	// Ready once the agent runs, not once it serves: its listener is
	// already open, so requests made while it starts wait in the backlog.
	// The entrypoint starts after: its move into the cgroup of the
	// sandbox's processes may wait out an RCU grace period (cgroup v1),
	// which the server's answer need not. Nothing depends on its being up
	// by then: a pause catches processes that start while it stops them.
	// The pipe stays open, the init's alone, for its reports of the
	// agent (reportExecd).
	syscall.CloseOnExec(fdReady)
	reports = os.NewFile(fdReady, "ready")
	reports.WriteString("ready\n")
	entrypointPID = startEntrypoint(cfg)
	return nil
}

// warmDecoder decodes a configuration with every part filled in: the
// first decode of a type builds its tables by reflection, milliseconds in
// a new process, and this is done while the init waits for its real
// configuration rather than after it came.
func warmDecoder() {
	b := bindSpec{FD: 1, Source: "s", Target: "t", ReadOnly: true}
	sample, _ := json.Marshal(initConfig{Hostname: "h", TrustedCA: []byte("c"), Entrypoint: []string{"e"}, Env: []string{"e"},
		Binds: []bindSpec{b}, Agent: &agentStart{Config: "c", ListenerFD: 1}, NoFile: 1,
		Rootfs: &rootfsSpec{Layers: []bindSpec{b}, Upper: b, WorkDir: "w", User: &User{UID: 1, GID: 1}}})
	json.Unmarshal(sample, new(initConfig))
}

// quotaShare is the part of the host's per-user kernel quotas one sandbox
// of a rootless server may take: 1/quotaShare. Every such sandbox's user
// namespace is owned by the server's user, so what its processes hold of
// those quotas is charged to that user too, and one sandbox could
// otherwise take all of it, for the other sandboxes and for the server's
// user on the host. (As root, each sandbox's namespace has an owner of
// its own: see idrange_linux.go.)
const quotaShare = 4

// shareKernelQuotas lowers, for the sandbox's user namespace (which its
// root cannot raise: that root lives in a namespace nested in it), its
// inotify instances and watches to a share of the host's per-user limits,
// and its POSIX message-queue bytes (RLIMIT_MSGQUEUE, inherited by every
// process) likewise. Best effort: a kernel without them keeps its own.
func shareKernelQuotas() {
	for _, q := range [][2]string{
		{"/proc/sys/fs/inotify/max_user_instances", "/proc/sys/user/max_inotify_instances"},
		{"/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"},
	} {
		b, err := os.ReadFile(q[0])
		if err != nil {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n >= quotaShare {
			os.WriteFile(q[1], []byte(strconv.FormatUint(n/quotaShare, 10)), 0)
		}
	}
	var mq unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MSGQUEUE, &mq) == nil && mq.Max != unix.RLIM_INFINITY {
		n := mq.Max / quotaShare
		unix.Setrlimit(unix.RLIMIT_MSGQUEUE, &unix.Rlimit{Cur: min(mq.Cur, n), Max: n})
	}
}

// reports is the init's end of the ready pipe, on which it tells the
// server of its agent's deaths and restarts.
var reports *os.File

// reportExecd tells the server what became of the agent. The pipe is the
// init's alone: what the server reads there, no process of the sandbox
// wrote. A line is shorter than PIPE_BUF, so it arrives whole.
func reportExecd(d ExecdDown) {
	if reports != nil {
		reports.WriteString(d.format())
	}
}

// agent is the sandbox's execd as the init keeps it: its listener stays
// open in the init, so that a new agent takes over the same socket when
// one dies (an OOM kill, a crash), and requests made meanwhile wait in the
// socket's backlog for it rather than fail. nil without an agent.
var agent *agentWatch

type agentWatch struct {
	cfg initConfig
	ln  *os.File
	// mu guards the rest: a restart runs on a timer, while the init goes
	// on reaping (reapForever).
	mu       sync.Mutex
	pid      int           // 0 while a restart waits
	pending  chan struct{} // closed once a waiting restart has run; nil when none waits
	restarts int
	deaths   int // every death, for the server's view (ExecdDown), and the next agent's generation
	last     time.Time
}

// awaitRestart waits out a pending restart, and says whether an agent may
// be running (a child to wait for again).
func (a *agentWatch) awaitRestart() bool {
	a.mu.Lock()
	pending, running := a.pending, a.pid != 0
	a.mu.Unlock()
	if pending != nil {
		<-pending
		return true
	}
	return running
}

// is says whether pid is the agent's.
func (a *agentWatch) is(pid int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return pid == a.pid
}

// exited restarts the agent whose exit the init has just collected, and
// says so in the sandbox's log. Restarts in quick succession back off, up
// to a few seconds apart, so that an agent that cannot start does not
// spin; the wait is a timer, not a sleep, for the init must go on
// collecting the sandbox's other processes (the entrypoint's exit among
// them) meanwhile.
func (a *agentWatch) exited(st unix.WaitStatus) {
	how := fmt.Sprintf("exit status %d", st.ExitStatus())
	if st.Signaled() {
		how = "killed by " + unix.SignalName(st.Signal())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pid = 0
	if time.Since(a.last) > time.Minute {
		a.restarts = 0
	}
	delay := min(time.Duration(a.restarts)*500*time.Millisecond, 5*time.Second)
	a.restarts++
	a.deaths++
	a.pending = make(chan struct{})
	reportExecd(ExecdDown{Deaths: a.deaths, How: how, At: time.Now().Add(delay)})
	time.AfterFunc(delay, func() { a.restart(how) })
}

// restart starts a new agent on the same listener. The lock is held until
// its pid is known, so that an agent dying at once is still told apart.
func (a *agentWatch) restart(how string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	defer func() { close(a.pending); a.pending = nil }()
	a.last = time.Now()
	pid, err := startAgent(a.cfg, a.ln, a.deaths)
	if err != nil {
		fmt.Fprintf(os.Stderr, "osb sandbox init: execd %s and could not be restarted: %v\n", how, err)
		reportExecd(ExecdDown{Deaths: a.deaths, How: how, At: a.last, Failed: true})
		return
	}
	a.pid = pid
	reportExecd(ExecdDown{Deaths: a.deaths, How: how, At: a.last, Restarted: true})
	fmt.Fprintf(os.Stderr, "osb sandbox init: execd %s; restarted\n", how)
}

// entrypointPID is the entrypoint's process, whose end the init reports.
var entrypointPID int

// startEntrypoint starts the sandbox's entrypoint and returns its pid. One
// that cannot start is reported in the sandbox log and ends with 127 (as a
// shell reports a command not found), and the sandbox stays up, as a
// container whose command failed would be left for inspection.
func startEntrypoint(cfg initConfig) int {
	cmd := exec.Command(cfg.Entrypoint[0], cfg.Entrypoint[1:]...)
	if cmd.Err == nil && hasShell() {
		cmd = exec.Command("/bin/sh", append([]string{"-c", oomFirst, cfg.Entrypoint[0], cmd.Path}, cfg.Entrypoint[1:]...)...)
	}
	cmd.Env, cmd.Dir = cfg.Env, "/workspace"
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = lockedMountsAttr(cfg.Rootless)
	if rs := cfg.Rootfs; rs != nil {
		cmd.Dir = cmp.Or(rs.WorkDir, cmd.Dir)
		if rs.User != nil {
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: rs.User.UID, Gid: rs.User.GID}
		}
	}
	if err := startGated(cmd, confinePID); err != nil {
		fmt.Fprintln(os.Stderr, "osb sandbox init: entrypoint:", err)
		writeExit(127)
		return 0
	}
	return cmd.Process.Pid
}

// writeExit records the entrypoint's exit code where the host reads it
// (Sandbox.EntrypointExit).
func writeExit(code int) {
	os.WriteFile(agentDir+"/"+exitFile, []byte(strconv.Itoa(code)+"\n"), 0o644)
}

// startAgent starts the agent on the listener ln, the gen-th to start
// after gen deaths. The line it writes once it serves goes nowhere: the
// init has reported the sandbox ready. Its requests to confine commands
// are served until it ends.
func startAgent(cfg initConfig, ln *os.File, gen int) (int, error) {
	a := cfg.Agent
	ready, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer ready.Close()
	mine, theirs, err := socketPair()
	if err != nil {
		return 0, err
	}
	defer theirs.Close()
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"osb-sandbox-agent"}
	cmd.Env = []string{AgentEnv + "=" + a.Config, AgentGenEnv + "=" + strconv.Itoa(gen), "PATH=" + envPath(cfg.Env)}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.ExtraFiles = []*os.File{ln, ready, theirs}
	if l := hostLoader; l != nil {
		cmd.Path = l.path
		cmd.Args = []string{l.path, "--library-path", l.libPath, "/proc/self/fd/6"}
		cmd.ExtraFiles = append(cmd.ExtraFiles, l.exe)
	}
	cmd.SysProcAttr = lockedMountsAttr(cfg.Rootless)
	if err := cmd.Start(); err != nil {
		mine.Close()
		return 0, err
	}
	agentPID.Store(int64(cmd.Process.Pid))
	go serveConfine(mine)
	return cmd.Process.Pid, nil
}

// lockedMountsAttr starts a process in a user and mount namespace nested in
// the init's, with the same ids. Mounts the init made are copied into the
// nested namespace locked: root there cannot make the read-only binds
// writable again, nor unmount what covers the host's tree. Rootless, the
// init's namespace has only its root, and setgroups is denied there.
func lockedMountsAttr(rootless bool) *syscall.SysProcAttr {
	size := idCount
	if rootless {
		size = 1
	}
	ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: size}}
	return &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                ids,
		GidMappings:                ids,
		GidMappingsEnableSetgroups: !rootless,
		Credential:                 &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: rootless},
	}
}

// openNetwork lets the sandbox's root, which (in its nested user
// namespace) does not own the network namespace, still bind low ports and
// ping, as root in a container can.
func openNetwork() {
	os.WriteFile("/proc/sys/net/ipv4/ip_unprivileged_port_start", []byte("0"), 0)
	os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0)
}

// reapForever is the init's life: collect every process that ends in the
// sandbox. The host ends the sandbox by killing the init.
func reapForever(entrypoint int) {
	for {
		var st unix.WaitStatus
		pid, err := unix.Wait4(-1, &st, 0, nil)
		if pid == entrypoint && pid > 0 {
			switch {
			case st.Exited():
				writeExit(st.ExitStatus())
			case st.Signaled():
				writeExit(128 + int(st.Signal()))
			}
		}
		if errors.Is(err, unix.ECHILD) {
			if agent != nil && agent.awaitRestart() {
				continue
			}
			// Nothing left to wait for: wait for a signal-less eternity.
			select {}
		}
		if agent != nil && pid > 0 && agent.is(pid) {
			agent.exited(st)
		}
	}
}

// rootBase is where the new root is assembled before pivot_root: a mount
// point that exists on the host, covered in the init's mount namespace only.
var rootBases = []string{"/mnt", "/tmp", "/run", "/var/tmp", "/media", "/srv"}

// hostDirs are the host's top-level directories of programs and libraries,
// shown read-only. Nothing else of the host's tree is.
var hostDirs = []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "opt"}

// newRoot mounts the tmpfs the sandbox's root is assembled in, and
// returns where.
func newRoot() (string, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "", fmt.Errorf("private mounts: %w", err)
	}
	r := ""
	for _, b := range rootBases {
		if fi, err := os.Lstat(b); err == nil && fi.IsDir() {
			r = b
			break
		}
	}
	if r == "" {
		return "", errors.New("no directory to assemble the root in")
	}
	if err := unix.Mount("osb-root", r, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return "", fmt.Errorf("root tmpfs: %w", err)
	}
	return r, nil
}

// buildRoot assembles the sandbox's root as the init starts, with
// early's binds (the sandbox's own directories): an image's (early.Rootfs)
// or the host's programs. No request changes it; finishRoot adds what the
// request says.
func buildRoot(early *initConfig) (string, error) {
	if early == nil {
		return "", errors.New("the configuration names no root")
	}
	r, err := newRoot()
	if err != nil {
		return "", err
	}
	steps := []func(string, initConfig) error{makeMisc, mountHostDirs, mountBinds, makeEtc, makeDev, mountKernelFS}
	if early.Rootfs != nil {
		if r, err = mountImageRoot(r, early.Rootfs); err != nil {
			return "", err
		}
		steps = []func(string, initConfig) error{makeImageMisc, mountBinds, makeImageEtc, makeDev, mountKernelFS, mountHostLoader}
	}
	for _, step := range steps {
		if err := step(r, *early); err != nil {
			return "", err
		}
	}
	return r, writeCABundle(r, nil)
}

// finishRoot mounts the configuration's binds (volumes) in the root
// buildRoot made at r, adds the CA it trusts to its CA bundle, and moves
// into it; with readOnly (the host's programs) the root itself ends
// read-only.
func finishRoot(r string, cfg initConfig, readOnly bool) error {
	if err := mountBinds(r, cfg); err != nil {
		return err
	}
	if err := appendCA(r, cfg.TrustedCA); err != nil {
		return err
	}
	return pivot(r, readOnly)
}

func mountHostDirs(r string, _ initConfig) error {
	for _, name := range hostDirs {
		src := "/" + name
		fi, err := os.Lstat(src)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, filepath.Join(r, name)); err != nil {
				return err
			}
		case fi.IsDir():
			if err := bindRO(src, filepath.Join(r, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// mountBinds mounts the sandbox's own writable directories.
func mountBinds(r string, cfg initConfig) error {
	for _, b := range cfg.Binds {
		dst, err := dirIn(r, b.Target)
		if err != nil {
			return fmt.Errorf("mount %s: %w", b.Target, err)
		}
		if err := attachBind(b, dst); err != nil {
			return fmt.Errorf("mount %s: %w", b.Target, err)
		}
		if b.ReadOnly {
			if err := unix.MountSetattr(-1, dst, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
				return fmt.Errorf("read-only %s: %w", b.Target, err)
			}
		}
		if b.FD > 0 {
			unix.Close(b.FD)
		}
	}
	return nil
}

// attachBind mounts a bind at dst: the detached mount the server opened
// (as root), or, rootless, the host directory itself, which the init (the
// server's own uid on the host) can reach until pivot_root.
func attachBind(b bindSpec, dst string) error {
	if b.FD > 0 {
		return unix.MoveMount(b.FD, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
	}
	return unix.Mount(b.Source, dst, "", unix.MS_BIND|unix.MS_REC, "")
}

// bindRO shows a host directory, with whatever is mounted below it, read-only.
func bindRO(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("mount %s: %w", src, err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(-1, dst, unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("read-only %s: %w", src, err)
	}
	return nil
}

// etcShared are the host /etc entries a sandbox sees (read-only): what
// programs need to run, none of the host's secrets or identity (no shadow,
// ssh host keys, machine-id, sudoers, users and groups).
var etcShared = []string{
	"alternatives", "bash.bashrc", "bash_completion.d", "ca-certificates", "ca-certificates.conf",
	"debian_version", "environment", "fonts", "gai.conf", "host.conf", "inputrc", "issue",
	"java-17-openjdk", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "locale.alias", "locale.gen",
	"localtime", "login.defs", "lsb-release", "magic", "magic.mime", "manpath.config", "mime.types",
	"networks", "perl", "profile", "profile.d", "protocols", "python3", "services", "shells",
	"skel", "ssl/certs", "ssl/openssl.cnf", "terminfo", "timezone", "vim", "wgetrc", "xattr.conf",
	"gitconfig", "pip.conf", "npmrc", "maven", "X11", "xml", "sgml", "default", "security/limits.conf",
	"alpine-release", "redhat-release", "system-release", "pki/tls/certs", "pki/ca-trust",
	"pki/tls/openssl.cnf", "selinux/config", "mtab",
}

func makeEtc(r string, cfg initConfig) error {
	etc := filepath.Join(r, "etc")
	if err := os.Mkdir(etc, 0o755); err != nil {
		return err
	}
	for _, name := range etcShared {
		if err := shareEtc(etc, name); err != nil {
			return err
		}
	}
	osRelease, _ := os.ReadFile("/etc/os-release")
	if osRelease == nil {
		osRelease, _ = os.ReadFile("/usr/lib/os-release")
	}
	h := cfg.Hostname
	files := map[string]string{
		"passwd":        "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group":         "root:x:0:\ntty:x:5:\nnogroup:x:65534:\n",
		"hostname":      h + "\n",
		"hosts":         "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t" + h + "\n",
		"resolv.conf":   "# osb sandbox: no direct network; HTTP(S) goes through the proxy in HTTP_PROXY\nnameserver 127.0.0.1\n",
		"nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n",
		"os-release":    string(osRelease),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// shareEtc shows one host /etc entry: directories bind-mounted read-only,
// files and symlinks copied (the whole /etc is read-only in the end).
func shareEtc(etc, name string) error {
	src := filepath.Join("/etc", name)
	dst := filepath.Join(etc, name)
	fi, err := os.Lstat(src)
	if err != nil {
		return nil // not on this host
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return nil
		}
		return os.Symlink(target, dst)
	case fi.IsDir():
		return bindRO(src, dst)
	case fi.Mode().IsRegular():
		return copyFile(src, dst, fi.Mode().Perm())
	}
	return nil
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return nil // unreadable to the sandbox's user: not shared
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// devices are the host device nodes a sandbox gets (bind-mounted: a user
// namespace cannot create device nodes).
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

func makeDev(r string, cfg initConfig) error {
	dev, err := dirIn(r, "dev")
	if err != nil {
		return err
	}
	if err := unix.Mount("osb-dev", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("/dev: %w", err)
	}
	for _, d := range devices {
		p := filepath.Join(dev, d)
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+d, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("/dev/%s: %w", d, err)
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return err
		}
	}
	// Rootless, group tty (5) does not exist in the sandbox: terminals
	// stay root's.
	opts := "newinstance,ptmxmode=0666,mode=0620,gid=5"
	if cfg.Rootless {
		opts = "newinstance,ptmxmode=0666,mode=0620"
	}
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("/dev/pts: %w", err)
	}
	// 64 MiB, as a container's /dev/shm has by default (tmpfs's own
	// default is half the host's memory).
	if err := unix.Mount("shm", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("/dev/shm: %w", err)
	}
	links := map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	return nil
}

func mountKernelFS(r string, _ initConfig) error {
	proc, err := dirIn(r, "proc")
	if err != nil {
		return err
	}
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("/proc: %w", err)
	}
	sys, err := dirIn(r, "sys")
	if err != nil {
		return err
	}
	// sysfs shows this network namespace's devices only; without it some
	// programs only lose hardware facts, so a refusal is not fatal.
	unix.Mount("sysfs", sys, "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	return nil
}

// makeMisc adds the usual empty top-level directories and a private /run.
func makeMisc(r string, _ initConfig) error {
	for _, d := range []string{"mnt", "media", "srv", "var", "run", "workspace", "tmp", "root", "home"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.Symlink("/tmp", filepath.Join(r, "var", "tmp")); err != nil {
		return err
	}
	if err := unix.Mount("osb-run", filepath.Join(r, "run"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
		return fmt.Errorf("/run: %w", err)
	}
	return nil
}

// pivot makes r the root and drops the host's tree from the namespace, so
// no path (and no chroot trick) leads back to it. With readOnly, the root
// itself ends read-only; its writable parts are the mounts in it. (An
// image's root is writable, as a container's is.)
func pivot(r string, readOnly bool) error {
	if err := os.Chdir(r); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach host root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if !readOnly {
		return nil
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, "/", 0, attr); err != nil {
		return fmt.Errorf("read-only root: %w", err)
	}
	return nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// CloseOnExecExcept marks every descriptor from 3 up, but those in keep,
// close-on-exec: what the server itself inherited (from a shell, a
// supervisor) must not reach the sandbox's processes.
func CloseOnExecExcept(keep ...int) {
	if closeOnExecRanges(keep) == nil {
		return
	}
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 || slices.Contains(keep, fd) {
			continue
		}
		unix.CloseOnExec(fd)
	}
}

// closeOnExecRanges marks the descriptors between those of keep with
// close_range (Linux 5.11), without reading /proc/self/fd (a millisecond).
func closeOnExecRanges(keep []int) error {
	keep = slices.Sorted(slices.Values(keep))
	from := uint(3)
	for _, fd := range keep {
		if fd < int(from) {
			continue
		}
		if fd > int(from) {
			if err := unix.CloseRange(from, uint(fd-1), unix.CLOSE_RANGE_CLOEXEC); err != nil {
				return err
			}
		}
		from = uint(fd) + 1
	}
	return unix.CloseRange(from, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
}

// envPath is the PATH of a KEY=VALUE environment, or defaultPath.
func envPath(env []string) string {
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok && p != "" {
			return p
		}
	}
	return defaultPath
}
