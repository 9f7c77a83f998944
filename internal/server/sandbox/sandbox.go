// Package sandbox is the runtime of one local sandbox: a directory tree that
// stands in for the container filesystem, and the tree of processes started in
// it. Where Linux namespaces are available (see Probe) every process runs in
// the sandbox's own user (root inside, an unused uid outside), mount, pid,
// uts, ipc and network namespaces, on a root of its own: host system
// directories read-only, a private /etc, /dev and /proc, and the sandbox's
// own /workspace, /tmp, /root and /home (init_linux.go builds it). Its execd
// then runs inside too (package agent). Elsewhere processes run directly on
// the host with their working directory inside the sandbox.
package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Areas are the writable directories of a sandbox, relative to FSDir. Each is
// mounted at "/"+area inside an isolated sandbox, so the files API (which works
// on FS) and commands see the same files.
var Areas = []string{"workspace", "tmp", "root", "home"}

// ErrOutsideFS is returned by ResolvePath for paths outside the sandbox's own
// areas (host directories are shared read-only and not reachable through FS).
var ErrOutsideFS = errors.New("path is outside the sandbox filesystem (only /workspace, /tmp, /root and /home are sandbox files)")

// ErrGone is returned when a sandbox has been killed.
var ErrGone = errors.New("sandbox has been killed")

// Config describes a sandbox to create.
type Config struct {
	ID       string            // sandbox id; also OPENSANDBOX_ID in every process environment
	Dir      string            // private directory of this sandbox; created by New, removed by Remove
	Env      map[string]string // environment of the entrypoint and every command (the create request's env)
	Isolated bool              // run in namespaces; only honoured when Probe reports them available
	Agent    bool              // isolated: run the execd agent inside (the binary must link package agent)
	Limits   *Limits           // enforce these with a cgroup; nil: no limits
	// TrustedCA (PEM), isolated: a CA the sandbox's TLS clients trust on
	// top of the system's (the egress proxy's, see CABundle).
	TrustedCA []byte
	// Rootfs, isolated: run on an image's layers instead of the host's
	// programs (rootfs_linux.go).
	Rootfs *Rootfs
	// Mounts, isolated: host directories shown in the sandbox (volumes).
	Mounts []Mount
}

// Rootfs is an image's root filesystem and the configuration its
// processes start with.
type Rootfs struct {
	Layers  []string // unpacked layers in the overlayfs format, lowest first
	WorkDir string   // of the entrypoint and, by default, of commands; "" means /workspace
	User    *User    // of the entrypoint and, by default, of commands; nil means root
}

// User is a uid and gid inside the sandbox.
type User struct{ UID, GID uint32 }

// Mount is a host directory shown at Target inside the sandbox.
type Mount struct {
	Source string   // its real path
	Dir    *os.File // Source, opened: what is mounted (the caller closes it after Start)
	Target string   // absolute path inside the sandbox
	// ReadOnly mounts it read-only; the sandbox cannot make it writable.
	ReadOnly bool
	// MapOwners shows the directory's host owners as the same ids in the
	// sandbox (host root as its root), as a container's bind mount does,
	// where the kernel can (an idmapped mount); else they show unmapped.
	MapOwners bool
}

// Sandbox is one running sandbox. Its methods are safe for concurrent use.
type Sandbox struct {
	id       string
	dir      string
	fsDir    string
	env      map[string]string
	isolated bool
	agent    bool      // isolated with an in-sandbox agent
	inside   bool      // this is the agent's view from inside the sandbox (Inside)
	initLink *initLink // inside: the way to the init, which confines commands
	dirFile  *os.File  // isolated with agent: path-only descriptor of dir, for the agent socket
	limits   *Limits   // what the cgroup enforces
	caPEM    []byte    // isolated: Config.TrustedCA
	rootfs   *Rootfs   // isolated: the image it runs on; nil: host programs
	mounts   []Mount   // isolated: volumes
	workDir  string    // default working directory of commands
	user     *User     // default user of commands; nil: root (or the server's user)
	copied   bool      // rootfs: the layers were copied into Dir (no overlay here)
	cg       *cgroup   // once started, where cgroups can be made (unisolated: no limits, for members only)
	root     *os.Root
	logFile  *os.File
	// Until Start has finished: the write end of the log's pipe
	// (openLog), closed once Start's processes hold it, and the channel
	// closed once all written there is in the log.
	logOut    *os.File
	logCopied <-chan struct{}
	launch    *launch // made by Prepare, taken by Start

	netMu   sync.RWMutex // guards the anchor's netns descriptor (netns_linux.go)
	mu      sync.Mutex
	started bool
	// pauseMu orders Pause and Resume of this sandbox. It alone is held
	// through the wait for processes to stop, so readers of paused, Kill
	// and other sandboxes never wait behind a slow pause.
	pauseMu sync.Mutex
	paused  atomic.Bool
	// stopWaitHook, set by tests before Pause, runs before each round of
	// the wait for processes to stop: a pause as slow as a test needs.
	stopWaitHook func()
	anchor       atomic.Pointer[anchor] // the long-lived first process; nil before Start
	// The entrypoint's end once seen, and when its file was last looked
	// for (exit.go).
	exit       atomic.Pointer[entrypointExit]
	exitLooked atomic.Int64
	// The agent's deaths as the init last reported them (execdstate.go).
	execd atomic.Pointer[ExecdDown]

	killOnce sync.Once
	killErr  error         // set before killed is closed
	killed   chan struct{} // closed once Kill has finished
	done     chan struct{} // closed when Kill starts
}

// New creates the sandbox directory tree (<Dir>/fs/{workspace,tmp,root}) but
// starts nothing, so callers can fill the filesystem (snapshot restore) first.
func New(cfg Config) (*Sandbox, error) {
	if cfg.ID == "" || cfg.Dir == "" {
		return nil, errors.New("sandbox: ID and Dir are required")
	}
	s := &Sandbox{id: cfg.ID, dir: cfg.Dir, fsDir: filepath.Join(cfg.Dir, "fs"),
		done: make(chan struct{}), killed: make(chan struct{})}
	s.isolated = cfg.Isolated && Probe().Available
	s.agent = s.isolated && cfg.Agent
	s.Use(cfg)
	for _, a := range append([]string{"root"}, prefixAll("fs/", Areas)...) {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, a), 0o755); err != nil {
			return nil, err
		}
	}
	// /tmp must be world-writable with the sticky bit, as in any container.
	if err := os.Chmod(filepath.Join(s.FSDir(), "tmp"), 0o1777|os.ModeSticky); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(s.FSDir())
	if err != nil {
		return nil, err
	}
	s.root = root
	return s, nil
}

// Use gives a sandbox not started yet what a request says of it: cfg's
// Env, Limits, TrustedCA, Rootfs and Mounts (its ID, Dir, Isolated and
// Agent stay as New made them). A sandbox made ahead of any request
// (Prepare) gets them this way before Start.
func (s *Sandbox) Use(cfg Config) {
	s.env = cfg.Env
	s.limits = cfg.Limits
	s.workDir = "/workspace"
	if !s.isolated {
		return
	}
	s.caPEM = cfg.TrustedCA
	s.rootfs = cfg.Rootfs
	s.mounts = cfg.Mounts
	if r := cfg.Rootfs; r != nil {
		s.workDir = cmp.Or(r.WorkDir, s.workDir)
		s.user = r.User
	}
}

// Prepare starts an isolated sandbox's init ahead of Start, with what no
// request changes: its namespaces, its cgroup (joining one may wait out
// an RCU grace period), its own directories, and its root: the image New
// was given, or the host's programs. Its cgroup has limits l until Start
// sets those Use gave; l.PIDs must be set where the request's will be
// (the init then joins the pids reserve). Start hands the init the rest.
// Kill and Remove end it as they end a started sandbox.
func (s *Sandbox) Prepare(l Limits) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.isolated || s.started || s.launch != nil {
		return errors.New("sandbox: only an isolated sandbox not started yet is prepared")
	}
	if err := s.openLog(); err != nil {
		return err
	}
	s.limits = &l
	launched, err := launchIsolated(s, s.logOut, false)
	if err == nil {
		err = launched.awaitConfined()
	}
	if err != nil {
		if launched != nil {
			launched.abort()
		}
		return err
	}
	s.launch = launched
	s.anchor.Store(launched.a)
	return nil
}

// Fits says whether the sandbox, prepared or not, can take a request for
// cfg: a prepared one has the root Prepare built, which must be the one
// cfg asks for, and is alive.
func (s *Sandbox) Fits(cfg Config) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.launch == nil {
		return true
	}
	select {
	case <-s.launch.a.exited:
		return false
	default:
		return sameRoot(s.launch.image, cfg.Rootfs)
	}
}

// sameRoot says whether a and b are the same root: the same layers, the
// same working directory and user; nil is the host's programs.
func sameRoot(a, b *Rootfs) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Layers, b.Layers) && a.WorkDir == b.WorkDir &&
		(a.User == b.User || a.User != nil && b.User != nil && *a.User == *b.User)
}

// openLog opens the sandbox's log and the pipe its processes write it
// through, once, unless the sandbox is being killed.
func (s *Sandbox) openLog() error {
	select {
	case <-s.done:
		return ErrGone
	default:
	}
	if s.logOut != nil {
		return nil
	}
	log, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.logFile = log
	s.logOut, s.logCopied, err = stampLines(log)
	return err
}

func prefixAll(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + n
	}
	return out
}

// ID returns the sandbox id.
func (s *Sandbox) ID() string { return s.id }

// Isolated reports whether the sandbox's processes run in their own namespaces.
func (s *Sandbox) Isolated() bool { return s.isolated }

// Dir returns the sandbox's private directory.
func (s *Sandbox) Dir() string { return s.dir }

// FSDir returns the host directory holding the sandbox files (workspace/, tmp/, root/).
func (s *Sandbox) FSDir() string { return s.fsDir }

// FS returns the sandbox files as an os.Root: names cannot escape it, not even
// through symlinks written by sandbox processes.
func (s *Sandbox) FS() *os.Root { return s.root }

// LogPath is where the entrypoint's stdout and stderr go.
func (s *Sandbox) LogPath() string { return filepath.Join(s.dir, "entrypoint.log") }

// Done is closed when the sandbox is being killed.
func (s *Sandbox) Done() <-chan struct{} { return s.done }

// ResolvePath maps a path as seen inside the sandbox (absolute, or relative to
// /workspace) to a name for FS(). Only paths inside Areas resolve.
func (s *Sandbox) ResolvePath(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("invalid path %q", p)
	}
	if !path.IsAbs(p) {
		p = "/workspace/" + p
	}
	if s.inside {
		return resolveInside(p), nil
	}
	p = path.Clean(p)
	for _, a := range Areas {
		if p == "/"+a || strings.HasPrefix(p, "/"+a+"/") {
			return p[1:], nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrOutsideFS, p)
}

// hostPath maps a sandbox path to the host path an unisolated process uses:
// paths in Areas go to FSDir, anything else is the host path itself.
func (s *Sandbox) hostPath(p string) string {
	name, err := s.ResolvePath(p)
	if err != nil {
		return path.Clean(p)
	}
	return filepath.Join(s.FSDir(), filepath.FromSlash(name))
}

// Start starts the entrypoint (argv). The sandbox keeps running when the
// entrypoint exits: a small init process owns the sandbox until Kill.
func (s *Sandbox) Start(entrypoint []string) error {
	if len(entrypoint) == 0 {
		return errors.New("sandbox: empty entrypoint")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("sandbox: already started")
	}
	if err := s.openLog(); err != nil {
		return err
	}
	a, err := startAnchor(s, entrypoint, s.logOut)
	s.logOut.Close() // the sandbox's processes hold it now
	s.logOut = nil
	if err != nil {
		// What the failed start printed, once it is all in the log (a
		// loaded machine may take seconds to copy it).
		select {
		case <-s.logCopied:
		case <-time.After(10 * time.Second):
		}
		if printed := tail(s.LogPath()); printed != "" {
			return fmt.Errorf("%w: %s", err, printed)
		}
		return err
	}
	s.anchor.Store(a)
	s.started = true
	return nil
}

// Paused reports whether the sandbox's processes are stopped, or being
// stopped: from the moment a pause begins no request should reach them.
func (s *Sandbox) Paused() bool { return s.paused.Load() }

// Pause stops every process of the sandbox (SIGSTOP). It returns once they
// are all stopped, after at most stopWait (longer only by one scan of
// them), or once the sandbox is killed.
func (s *Sandbox) Pause() error {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	if s.gone() {
		return ErrGone
	}
	s.paused.Store(true)
	// A process forked between listing and signalling is caught by the
	// wait's rounds, which stop whatever still runs.
	signalAll(s.stoppable(s.members()), sigStop)
	s.awaitStopped(time.Now().Add(stopWait))
	return nil
}

// Resume continues every process of the sandbox (SIGCONT).
func (s *Sandbox) Resume() error {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	if s.gone() {
		return ErrGone
	}
	// One listing serves: stopped processes fork nothing in between.
	pids := s.members()
	signalAll(pids, sigCont)
	continueWaiters(pids)
	s.paused.Store(false)
	return nil
}

// stopWait bounds how long Pause waits for the processes to stop.
const stopWait = 3 * time.Second

// awaitStopped waits until every process is stopped, the deadline passes
// or the sandbox is killed. A child forked just before its parent stopped
// escapes the first signals, so every round stops whatever still runs.
// One scan of the processes per round, and rounds further apart the longer
// it takes: on a loaded machine the scans are what is slow.
func (s *Sandbox) awaitStopped(deadline time.Time) {
	pause := 5 * time.Millisecond
	for {
		if s.stopWaitHook != nil {
			s.stopWaitHook()
		}
		pids := s.members()
		if allStopped(pids) {
			return
		}
		signalAll(s.stoppable(pids), sigStop)
		if !time.Now().Before(deadline) {
			return
		}
		select {
		case <-s.done:
			return
		case <-time.After(min(pause, time.Until(deadline))):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// gone reports whether Kill has started.
func (s *Sandbox) gone() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Kill terminates every process of the sandbox: SIGTERM, then SIGKILL after a
// short grace period. It returns once they are gone. Idempotent.
func (s *Sandbox) Kill() error { return KillAll([]*Sandbox{s}) }

const killGrace = time.Second

// Remove kills the sandbox and deletes its directory.
func (s *Sandbox) Remove() error {
	kerr := s.Kill()
	s.root.Close()
	s.mu.Lock()
	if s.launch != nil {
		s.launch.close() // a prepared init, never started: Kill ended it
		s.launch = nil
	}
	if s.logOut != nil {
		s.logOut.Close()
		s.logOut = nil
	}
	s.mu.Unlock()
	if s.logFile != nil {
		s.logFile.Close()
	}
	if s.dirFile != nil {
		s.dirFile.Close()
	}
	s.closeNamespaces()
	if s.cg != nil {
		kerr = errors.Join(kerr, s.cg.remove())
	}
	if m := mountsUnder(s.dir); len(m) > 0 {
		// Never delete through a mount point: it could reach host files.
		return fmt.Errorf("sandbox %s: refusing to remove %s, mounts remain: %v", s.id, s.dir, m)
	}
	return errors.Join(kerr, RemoveTree(s.dir))
}
