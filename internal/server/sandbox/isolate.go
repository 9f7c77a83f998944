package sandbox

import (
	"bufio"
	"errors"
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
	initPID  int    // host pid of the sandbox init (isolated) or of the anchor shell
	pidNS    string // isolated: the sandbox pid namespace, as readlink /proc/PID/ns/pid
	// isolated: that namespace, held open until Remove. The kernel gives a
	// namespace's number to the next one made once it is gone: unheld,
	// pidNS could name another sandbox's once this one's init is reaped,
	// and a scan for this sandbox's processes (scanOwners) would take
	// that one's for its own, and kill them.
	pidNSFile *os.File
	marker    string   // unisolated: the environment entry every sandbox process carries
	netns     *os.File // isolated: the sandbox's network namespace, kept open
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

// launch is an isolated sandbox's init from its start until it has its
// configuration: in the sandbox's namespaces, joining its cgroup, with the
// sandbox's own directories open, waiting on conf. All that no request
// changes is done by then, so that an init launched ahead of any request
// (Prepare) leaves a create only configure.
type launch struct {
	a        *anchor
	conf     *os.File // the server's end of the init's configuration socket
	ready    *os.File // the read end of the init's ready pipe
	idm      *idmapper
	own      map[string]bindSpec // the sandbox's own directories (isolatedBinds), by target
	metrics  []bindSpec          // the cgroup's files the agent reads its usage from
	listener int                 // the agent's listener, as the init has it; 0: none
	sockets  int                 // rootless: the init's end of its socket pair
	procs    int                 // the cgroup.procs the init moves commands to, and its own
	reserve  int                 // reserve's, as the init has them (confine_linux.go); 0: none
	limited  bool                // the cgroup has the sandbox's limits already
	set      Limits              // the limits the cgroup was made with
	image    *Rootfs             // the image whose root the init builds as it starts; nil: the host's programs
	root     *rootfsSpec         // image: its layers and the sandbox's own, as the init has them
	confined chan error          // the end of the init's cgroup join: see awaitConfined
	joinOnce sync.Once
	joinErr  error
}

// awaitConfined waits until the init has joined the sandbox's cgroup.
func (l *launch) awaitConfined() error {
	l.joinOnce.Do(func() { l.joinErr = <-l.confined })
	return l.joinErr
}

// startIsolated configures the init Prepare launched, or launches one
// now, and waits until it (or its agent) reports ready.
func startIsolated(s *Sandbox, entrypoint []string, log *os.File) (*anchor, error) {
	l := s.launch
	s.launch = nil
	if l == nil {
		var err error
		if l, err = launchIsolated(s, log, true); err != nil {
			return nil, err
		}
	}
	return l.configure(s, entrypoint)
}

// launchIsolated starts the sandbox init (see init_linux.go and
// initCommand) in new namespaces and puts it in the sandbox's cgroup, with
// the sandbox's limits, or, not final, limits that configure replaces.
// The init builds the sandbox's root (its image's, or the host's programs)
// at once: no request changes it.
func launchIsolated(s *Sandbox, log *os.File, final bool) (*launch, error) {
	var files []*os.File // the init's descriptors, from 3 on
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	l := &launch{own: map[string]bindSpec{}, image: s.rootfs, confined: make(chan error, 1)}
	var confInit, readyW *os.File
	var err error
	if l.conf, confInit, err = configSocket(); err != nil {
		return nil, err
	}
	files = append(files, confInit)
	if l.ready, readyW, err = os.Pipe(); err != nil {
		l.conf.Close()
		return nil, err
	}
	files = append(files, readyW)
	// As root, the sandbox gets host ids of its own (idrange_linux.go),
	// held until its init has exited.
	var ids *idRange
	if !rootless {
		if ids, err = takeRange(); err == nil {
			l.idm, err = newIdmapper(ids, s.dir)
		}
	}
	if err == nil {
		err = l.open(s, &files)
	}
	if err == nil && (s.limits != nil || Cgroups().Available) {
		// Without limits the cgroup still names the sandbox's processes
		// exactly (see members).
		var lim Limits
		if s.limits != nil {
			lim = *s.limits
		}
		l.limited, l.set = final, lim
		s.cg, err = newCgroup(s.id, lim)
		if err == nil && s.limits != nil {
			err = l.openCgroup(s, &files)
		}
		if err != nil {
			err = fmt.Errorf("resource limits: %w", err)
		}
	}
	var cmd *exec.Cmd
	if err == nil {
		cmd = initCommand(files)
		cmd.Args = []string{"osb-sandbox-init"}
		cmd.Env = []string{initEnv + "=1", "GOMAXPROCS=1"} // never the server's environment
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = initAttr(ids)
		owner := 0
		if ids != nil {
			owner = ids.owner
		}
		if err = startSteadyAs(cmd, owner); err != nil {
			err = fmt.Errorf("starting sandbox init: %w", err)
		}
	}
	if err != nil {
		ids.release()
		l.close()
		return nil, err
	}
	l.a.cmd, l.a.initPID = cmd, cmd.Process.Pid
	go func() { cmd.Wait(); ids.release(); close(l.a.exited) }()
	// The cgroup join waits out an RCU grace period (milliseconds, on
	// cgroup v1): it goes on while the mounts are idmapped and the init
	// is configured. The init starts no process before its configuration
	// ends, which comes once it is in, so that what is set on it holds
	// for every process of the sandbox.
	go func() { l.confined <- s.confine(cmd.Process.Pid) }()
	// Until it is told of them the init has attached none of the mounts:
	// they can still be idmapped.
	err = l.idm.apply()
	if err == nil {
		err = sendEarly(l.conf, l.early(s))
	}
	if err != nil {
		l.abort()
		return nil, err
	}
	return l, nil
}

// early is what the init builds as it starts (sendEarly): the sandbox's
// root with its own directories.
func (l *launch) early(s *Sandbox) *initConfig {
	early := &initConfig{Hostname: hostname(s.id), Rootless: rootless, Rootfs: l.root}
	for _, b := range l.ownBinds() {
		early.Binds = append(early.Binds, l.own[b[1]])
	}
	early.Binds = append(early.Binds, l.metrics...)
	return early
}

// ownBinds are the sandbox's own directories its root shows: an image's
// own /root and /home stay, only its working areas are the server's.
func (l *launch) ownBinds() [][2]string {
	if l.image != nil {
		return imageBinds
	}
	return isolatedBinds
}

// open opens, for the init's start, the sandbox's own directories (and
// an image's layers), the agent's listener and (rootless) the socket pair
// of serveSockets.
func (l *launch) open(s *Sandbox, files *[]*os.File) error {
	l.a = &anchor{exited: make(chan struct{}), isolated: true}
	for _, b := range l.ownBinds() {
		spec, err := bindFor(files, 3, l.idm, filepath.Join(s.dir, b[0]), b[1], false, ownDir)
		if err != nil {
			return err
		}
		l.own[b[1]] = spec
	}
	if s.rootfs != nil {
		var err error
		l.root, err = s.rootfsSpec(func(dir, target string, readOnly bool, kind mountIDs) (bindSpec, error) {
			return bindFor(files, 3, l.idm, dir, target, readOnly, kind)
		})
		if err != nil {
			return err
		}
	}
	if s.agent {
		ln, err := s.listenAgent()
		if err != nil {
			return err
		}
		*files = append(*files, ln)
		l.listener = 2 + len(*files)
	}
	if rootless {
		mine, theirs, err := socketPair()
		if err != nil {
			return err
		}
		l.a.sockets = mine
		*files = append(*files, theirs)
		l.sockets = 2 + len(*files)
	}
	return nil
}

// openCgroup opens, for the init's start, what it has of the sandbox's
// cgroup: the cgroup.procs files it moves processes with, and the
// directories the agent reads its usage from.
func (l *launch) openCgroup(s *Sandbox, files *[]*os.File) error {
	procs, reserve, err := s.cg.reserveFiles()
	if err != nil {
		return err
	}
	if procs != nil {
		*files = append(*files, procs, reserve)
		l.procs, l.reserve = 1+len(*files), 2+len(*files)
	}
	for name, dir := range s.cg.metricsMounts() {
		b, err := bindFor(files, 3, l.idm, dir, metricsDir[1:]+"/"+name, true, hostIDs)
		if err != nil {
			return err
		}
		l.metrics = append(l.metrics, b)
	}
	return nil
}

// bindFor makes a host directory ready to mount in the sandbox: as root,
// a detached mount passed as a descriptor (appended to files, which the
// init has from number base on); rootless, its path. Where its owners
// must show as the sandbox's (kind), idm shows them so once it applies.
func bindFor(files *[]*os.File, base int, idm *idmapper, dir, target string, readOnly bool, kind mountIDs) (bindSpec, error) {
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
	*files = append(*files, f)
	b.FD = base + len(*files) - 1
	if kind == ownDir || kind == sandboxIDs {
		err = idm.own(f)
	}
	return b, err
}

// configure hands the launched init the rest of its configuration (what
// the request says) and waits until it reports ready.
func (l *launch) configure(s *Sandbox, entrypoint []string) (*anchor, error) {
	var passed []*os.File // sent with the configuration, numbered from fdPassed
	defer func() {
		for _, f := range passed {
			f.Close()
		}
	}()
	// Host-path volumes, whose owners show as the same ids inside: they
	// are idmapped through the init's own user namespace.
	var mapOwners []*os.File
	spec := func(dir, target string, readOnly bool, kind mountIDs) (bindSpec, error) {
		b, err := bindFor(&passed, fdPassed, l.idm, dir, target, readOnly, kind)
		if err == nil && kind == sameIDs && b.FD > 0 {
			mapOwners = append(mapOwners, passed[len(passed)-1])
		}
		return b, err
	}
	cfg, err := l.config(s, entrypoint, spec)
	if err == nil {
		err = l.idm.apply()
	}
	// From here a failure may come of the init's: its reason explains it.
	withInit := err == nil
	if err == nil {
		err = idmapThroughInit(l.a.initPID, mapOwners)
	}
	if err == nil {
		err = sendConfig(l.conf, passed, cfg)
	}
	if cerr := l.awaitConfined(); err == nil {
		err = cerr
	}
	l.conf.Close()
	var reports *bufio.Reader
	if err == nil {
		reports, err = l.a.awaitReady(l.ready, 10*time.Second)
	}
	if err != nil {
		if withInit {
			err = l.a.why(err, l.ready)
		}
		l.abort()
		return nil, fmt.Errorf("sandbox setup failed: %w", err)
	}
	l.idm.close()
	go s.watchExecd(reports, l.ready)
	return l.a, nil
}

// initFailed is the reason the init gave for not building the sandbox.
type initFailed struct{ reason string }

func (e initFailed) Error() string { return e.reason }

// why explains a failed setup: by the init's own reason, or, where the
// init is gone without giving one (or the failure seen first was only
// that it had gone), by how it ended.
func (a *anchor) why(err error, ready *os.File) error {
	if errors.As(err, &initFailed{}) {
		return err
	}
	ended := a.ended(time.Second)
	if ended == "" {
		return err
	}
	ready.SetReadDeadline(time.Now().Add(time.Second))
	line, _ := bufio.NewReader(ready).ReadString('\n')
	if reason, ok := strings.CutPrefix(line, readyFailed); ok {
		return initFailed{strings.TrimSuffix(reason, "\n")}
	}
	return fmt.Errorf("%w; the sandbox init %s", err, ended)
}

// ended says how the init ended, if it did within d: a setup that fails
// because the init is gone says whether it exited or was killed.
func (a *anchor) ended(d time.Duration) string {
	select {
	case <-a.exited:
		return a.cmd.ProcessState.String()
	case <-time.After(d):
		return ""
	}
}

// config is the init's configuration for the sandbox as it is now; spec
// readies a host directory to mount.
func (l *launch) config(s *Sandbox, entrypoint []string, spec func(dir, target string, readOnly bool, kind mountIDs) (bindSpec, error)) (initConfig, error) {
	cfg := initConfig{Hostname: hostname(s.id), Entrypoint: entrypoint, Env: s.processEnv(nil), Rootless: rootless,
		TrustedCA: s.caPEM, SocketsFD: l.sockets, ProcsFD: l.procs, ReserveFD: l.reserve}
	if !sameRoot(l.image, s.rootfs) {
		return cfg, errors.New("sandbox: its init was launched for another root")
	}
	if s.rootfs != nil {
		// Built already (early): what the entrypoint starts as.
		cfg.Rootfs = &rootfsSpec{WorkDir: l.root.WorkDir, User: l.root.User}
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
			return cfg, fmt.Errorf("volume at %s: %w", m.Target, err)
		}
		cfg.Binds = append(cfg.Binds, b)
	}
	if s.agent {
		cfg.Agent = &agentStart{Config: s.agentConfig(), ListenerFD: l.listener}
	}
	if s.limits == nil {
		return cfg, nil
	}
	if s.cg == nil {
		return cfg, fmt.Errorf("resource limits: %s", Cgroups().Reason)
	}
	cfg.NoFile = noFileLimit(s.limits.PIDs, fileMax(), ownNoFile())
	if !l.limited && *s.limits != l.set {
		if err := s.cg.limit(*s.limits); err != nil {
			return cfg, fmt.Errorf("resource limits: %w", err)
		}
	}
	return cfg, nil
}

// abort kills a launched init that will not be configured, and lets go
// of what its launch holds.
func (l *launch) abort() {
	kill(-l.a.initPID, syscall.SIGKILL)
	<-l.a.exited
	l.close()
}

// close lets go of the launch's descriptors.
func (l *launch) close() {
	l.conf.Close()
	l.ready.Close()
	if l.a != nil && l.a.sockets != nil {
		l.a.sockets.Close()
	}
	l.idm.close()
}

// awaitReady waits for the init's ready line, and returns the pipe's
// reader, on which the init's reports follow (watchExecd).
func (a *anchor) awaitReady(r *os.File, timeout time.Duration) (*bufio.Reader, error) {
	r.SetReadDeadline(time.Now().Add(timeout))
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	if reason, ok := strings.CutPrefix(line, readyFailed); ok {
		return nil, initFailed{strings.TrimSuffix(reason, "\n")}
	}
	if err != nil || line != "ready\n" {
		return nil, fmt.Errorf("no ready signal (%v)", err)
	}
	r.SetReadDeadline(time.Time{})
	// The init is a child not yet reaped: its pid, and so the namespace
	// both name, cannot change in between.
	f, err := os.Open(fmt.Sprintf("/proc/%d/ns/pid", a.initPID))
	if err != nil {
		return nil, err
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", a.initPID))
	if err == nil {
		err = a.openNetNS()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	a.pidNS, a.pidNSFile = ns, f
	return br, nil
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
