package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
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

// rootless: this server runs without root, so its sandboxes' user
// namespaces map only their root, to the server's own uid and gid.
var rootless = os.Geteuid() != 0

var (
	probeOnce   sync.Once
	probeResult Isolation
)

// Probe checks once per process whether sandboxes can get their own user,
// mount, pid, uts, ipc and network namespaces here (Linux, as root): it
// starts a sandbox init that exits at once. The result is cached.
func Probe() Isolation {
	probeOnce.Do(func() { probeResult = probe() })
	return probeResult
}

// anchor is the first process of a sandbox. Isolated: the sandbox init, pid
// 1 of the sandbox pid namespace (killing it kills the namespace).
// Unisolated: a shell that started the entrypoint and reaps.
type anchor struct {
	cmd      *exec.Cmd
	exited   chan struct{}
	isolated bool
	initPID  int      // host pid of the sandbox init (isolated) or of the anchor shell
	pidNS    string   // isolated: the sandbox pid namespace, as readlink /proc/PID/ns/pid
	marker   string   // unisolated: the environment entry every sandbox process carries
	netns    *os.File // isolated: the sandbox's network namespace, kept open
	// Isolated rootless: the server's end of the init's socket service.
	sockets   *os.File
	socketsMu sync.Mutex // one request at a time
}

// plainScript is the anchor of an unisolated sandbox.
const plainScript = `cd "$0" || exit 1; exitfile=$1; shift; { "$@" </dev/null; echo $? >"$exitfile"; } & while :; do wait; sleep 1; done`

func startAnchor(s *Sandbox, entrypoint []string, log *os.File) (*anchor, error) {
	DefaultSignals()
	if s.isolated && s.rootfs != nil {
		return s.startImage(entrypoint, log)
	}
	if s.isolated {
		return startIsolated(s, entrypoint, log)
	}
	return startPlain(s, entrypoint, log)
}

func startPlain(s *Sandbox, entrypoint []string, log *os.File) (*anchor, error) {
	if Cgroups().Available {
		// The cgroup names the sandbox's processes exactly, where the
		// marker misses any that dropped it, and holds its limits.
		var l Limits
		if s.limits != nil {
			l = *s.limits
		}
		cg, err := newCgroup(s.id, l)
		if err != nil {
			return nil, fmt.Errorf("tracking cgroup: %w", err)
		}
		s.cg = cg
	}
	argv := s.joined(append([]string{"/bin/sh", "-c", plainScript, filepath.Join(s.FSDir(), "workspace"), s.exitPath()}, entrypoint...))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = s.processEnv(nil)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = groupAttr(true)
	if err := startSteady(cmd); err != nil {
		if s.cg != nil {
			s.cg.remove()
			s.cg = nil
		}
		return nil, err
	}
	a := &anchor{cmd: cmd, exited: make(chan struct{}), initPID: cmd.Process.Pid, marker: s.marker()}
	go func() { cmd.Wait(); close(a.exited) }()
	return a, nil
}

// confine puts the (still idle) init into the sandbox's cgroup.
func (s *Sandbox) confine(pid int) error {
	if s.cg != nil {
		return s.cg.add(pid)
	}
	return nil
}

// mountIDs says how the owners of a directory mounted in a sandbox show
// there.
type mountIDs int

const (
	// hostIDs: as on the host (the sandbox's cgroup, which newCgroup
	// gives to the sandbox's root's host uid).
	hostIDs mountIDs = iota
	// sandboxIDs: what the shared block hostIDBase.. owns on disk is the
	// sandbox's (image layers, named volumes).
	sandboxIDs
	// ownDir: the sandbox's own directory, made and given to its root
	// on disk, shown as sandboxIDs.
	ownDir
	// sameIDs: host id N shows as the sandbox's id N (host-path volumes).
	sameIDs
)

// isolatedBinds are the sandbox's own directories (relative to its Dir)
// and where the init mounts them.
var isolatedBinds = [][2]string{
	{"fs/workspace", "workspace"}, {"fs/tmp", "tmp"}, {"fs/root", "root"}, {"fs/home", "home"},
	{"agent", agentDir[1:]},
}

// imageBinds are those of a sandbox that runs an image.
var imageBinds = [][2]string{{"fs/workspace", "workspace"}, {"fs/tmp", "tmp"}, {"agent", agentDir[1:]}}

// metricsDir is where, inside the sandbox, the agent reads its cgroup's
// usage (read-only).
const metricsDir = "/run/osb-metrics"

// agentDir is where, inside the sandbox, the agent keeps its state
// (command logs, upload spools).
const agentDir = "/run/osb"

// startIsolated starts the sandbox init (see init_linux.go and
// initCommand) in new namespaces, hands it its configuration and waits
// until it (or its agent) reports ready.
func startIsolated(s *Sandbox, entrypoint []string, log *os.File) (*anchor, error) {
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer cfgW.Close()
	ready, readyW, err := os.Pipe()
	if err != nil {
		cfgR.Close()
		return nil, err
	}
	defer func() {
		if ready != nil {
			ready.Close()
		}
	}()
	files = append(files, cfgR, readyW)
	cfg := initConfig{Hostname: hostname(s.id), Entrypoint: entrypoint, Env: s.processEnv(nil), Rootless: rootless}
	if s.limits != nil {
		cfg.NoFile = noFileLimit(s.limits.PIDs, fileMax(), ownNoFile())
	}
	// As root, the sandbox gets host ids of its own (idrange_linux.go),
	// held until its init has exited.
	var ids *idRange
	var idm *idmapper
	if !rootless {
		var err error
		if ids, err = takeRange(); err != nil {
			return nil, err
		}
		defer func() {
			if ids != nil {
				ids.release()
			}
		}()
		if idm, err = newIdmapper(ids, s.dir); err != nil {
			return nil, err
		}
		defer idm.close()
	}
	// Host-path volumes, whose owners show as the same ids inside: they
	// are idmapped through the init's own user namespace once it exists.
	var mapOwners []*os.File
	// spec makes a host directory ready to mount in the sandbox: as root,
	// a detached mount passed as a descriptor; rootless, its path.
	spec := func(dir, target string, readOnly bool, kind mountIDs) (bindSpec, error) {
		b := bindSpec{Target: target, ReadOnly: readOnly}
		if rootless {
			if kind == ownDir {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return b, err
				}
			}
			b.Source = dir
			return b, nil
		}
		open := openTree
		if kind == ownDir {
			open = openOwnedDir
		}
		f, err := open(dir)
		if err != nil {
			return b, err
		}
		files = append(files, f)
		b.FD = 2 + len(files)
		switch kind {
		case ownDir, sandboxIDs:
			err = idm.own(f)
		case sameIDs:
			mapOwners = append(mapOwners, f)
		}
		return b, err
	}
	bind := func(dir, target string, readOnly bool, kind mountIDs) error {
		b, err := spec(dir, target, readOnly, kind)
		cfg.Binds = append(cfg.Binds, b)
		return err
	}
	binds := isolatedBinds
	if s.rootfs != nil {
		// The image's own /root and /home stay: only the sandbox's
		// working areas are the server's directories.
		binds = imageBinds
		rs, err := s.rootfsSpec(spec)
		if err != nil {
			return nil, err
		}
		cfg.Rootfs = rs
	}
	for _, b := range binds {
		if err := bind(filepath.Join(s.dir, b[0]), b[1], false, ownDir); err != nil {
			return nil, err
		}
	}
	// Volumes go on top of the sandbox's own directories (a volume at
	// /workspace/data stays visible).
	for _, m := range s.mounts {
		src := m.Source
		if !rootless && m.Dir != nil {
			// The directory that was opened and checked, not whatever
			// the path names now.
			src = fmt.Sprintf("/proc/self/fd/%d", m.Dir.Fd())
		}
		kind := sandboxIDs
		if m.MapOwners {
			kind = sameIDs
		}
		b, err := spec(src, strings.TrimPrefix(path.Clean(m.Target), "/"), m.ReadOnly, kind)
		if err != nil {
			return nil, fmt.Errorf("volume at %s: %w", m.Target, err)
		}
		cfg.Binds = append(cfg.Binds, b)
	}
	if s.agent {
		ln, err := s.listenAgent()
		if err != nil {
			return nil, err
		}
		files = append(files, ln)
		cfg.Agent = &agentStart{Config: s.agentConfig(), ListenerFD: 2 + len(files)}
	}
	var sockets *os.File
	if rootless {
		mine, theirs, err := socketPair()
		if err != nil {
			return nil, err
		}
		sockets = mine
		files = append(files, theirs)
		cfg.SocketsFD = 2 + len(files)
	}
	if s.limits != nil || Cgroups().Available {
		// Without limits the cgroup still names the sandbox's processes
		// exactly (see members).
		var l Limits
		if s.limits != nil {
			l = *s.limits
		}
		cg, err := newCgroup(s.id, l)
		if err != nil {
			if sockets != nil {
				sockets.Close()
			}
			return nil, fmt.Errorf("resource limits: %w", err)
		}
		s.cg = cg
	}
	if s.limits != nil {
		cg := s.cg
		procs, reserve, err := cg.reserveFiles()
		if err != nil {
			return nil, fmt.Errorf("resource limits: %w", err)
		}
		if procs != nil {
			files = append(files, procs, reserve)
			cfg.ProcsFD, cfg.ReserveFD = 1+len(files), 2+len(files)
		}
		for name, dir := range cg.metricsMounts() {
			if err := bind(dir, metricsDir[1:]+"/"+name, true, hostIDs); err != nil {
				return nil, err
			}
		}
	}
	cfg.TrustedCA = s.caPEM
	cmd := initCommand(files)
	cmd.Args = []string{"osb-sandbox-init"}
	cmd.Env = []string{initEnv + "=1", "GOMAXPROCS=1"} // never the server's environment
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = initAttr(ids)
	owner := 0
	if ids != nil {
		owner = ids.owner
	}
	if err := startSteadyAs(cmd, owner); err != nil {
		if sockets != nil {
			sockets.Close()
		}
		return nil, fmt.Errorf("starting sandbox init: %w", err)
	}
	a := &anchor{cmd: cmd, exited: make(chan struct{}), isolated: true, initPID: cmd.Process.Pid, sockets: sockets}
	held := ids
	ids = nil // the anchor has it now
	go func() { cmd.Wait(); held.release(); close(a.exited) }()
	// The cgroup join waits out an RCU grace period (milliseconds, on
	// cgroup v1): it goes on while the mounts are idmapped.
	confined := make(chan error, 1)
	go func() { confined <- s.confine(cmd.Process.Pid) }()
	// Until it has its configuration the init has attached none of the
	// mounts: they can still be idmapped.
	err = idm.apply()
	if err == nil {
		err = idmapThroughInit(cmd.Process.Pid, mapOwners)
	}
	for _, f := range files {
		f.Close()
	}
	files = nil
	// The init builds the sandbox's root from its configuration while it
	// joins the cgroup; it starts no process before the configuration
	// pipe's end, which comes once it is in, so what is set on it now
	// holds for every process of the sandbox. Its mounts are idmapped
	// (above) before it has the configuration, which names them.
	if err == nil {
		json.NewEncoder(cfgW).Encode(cfg)
	}
	if cerr := <-confined; err == nil {
		err = cerr
	}
	cfgW.Close()
	var reports *bufio.Reader
	if err == nil {
		reports, err = a.awaitReady(ready, 10*time.Second)
	}
	if err != nil {
		kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-a.exited
		if sockets != nil {
			sockets.Close()
		}
		return nil, fmt.Errorf("sandbox setup failed: %w", err)
	}
	go s.watchExecd(reports, ready)
	ready = nil // watchExecd's now
	return a, nil
}

// awaitReady waits for the init's ready line, and returns the pipe's
// reader, on which the init's reports follow (watchExecd).
func (a *anchor) awaitReady(r *os.File, timeout time.Duration) (*bufio.Reader, error) {
	r.SetReadDeadline(time.Now().Add(timeout))
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	if err != nil || line != "ready\n" {
		return nil, fmt.Errorf("no ready signal (%v)", err)
	}
	r.SetReadDeadline(time.Time{})
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", a.initPID))
	if err != nil {
		return nil, err
	}
	a.pidNS = ns
	return br, a.openNetNS()
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
