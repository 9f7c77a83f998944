// Package server is the local OpenSandbox-compatible server behind `osb
// server`: the lifecycle API on one listener, and for each sandbox a process
// tree (package sandbox) with an execd-compatible data plane (package execd)
// served under the same listener's /sandboxes/{id}/proxy/{port} route.
package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/osb-dev/osb/internal/build"
	"github.com/osb-dev/osb/internal/server/egress"
	"github.com/osb-dev/osb/internal/server/image"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// Version is reported by GET /version: the osb build serving it.
var Version = build.Version

// Options configures a Server.
type Options struct {
	Listen  string    // "127.0.0.1:8080"; port 0 picks a free port
	APIKey  string    // required in OPEN-SANDBOX-API-KEY on lifecycle routes; "" disables auth, as the real server does
	DataDir string    // "" → a fresh temp dir, removed by Close
	Log     io.Writer // one line per request and per lifecycle event; nil discards. The API key is never logged.
	// Ready, for Run, gets the URL and a newline once the server listens,
	// and is then closed if it is an io.Closer (osb server --ready-fd).
	Ready io.Writer

	// MinTimeout is the smallest accepted create timeout. Zero means 60 s, the
	// real server's minimum; tests lower it to exercise expiry quickly.
	MinTimeout time.Duration
	// NoIsolation runs sandboxes without namespaces even where they work
	// (faster to create; for tests that need many sandboxes).
	NoIsolation bool
	// AcceptNoIsolation lets Run start where sandboxes cannot be isolated
	// (or with NoIsolation); without it Run refuses.
	AcceptNoIsolation bool
	// NoSpare makes every sandbox at its create, none ahead (spare.go).
	NoSpare bool
	// AllowUnlimited lets isolated sandboxes run without resource limits
	// where the host offers no cgroups; otherwise creating one fails.
	AllowUnlimited bool
	// PortHandlers serve a sandbox port in-process instead of proxying it to
	// 127.0.0.1:port. Port 18080 gets the local egress sidecar (package
	// egress) unless set here; a nil handler there means no sidecar (404).
	// Port 44772 is always execd.
	PortHandlers map[int]PortHandler
	// EgressDial is how sandboxes' egress proxies reach the outside world;
	// nil means egress.PublicDial. Tests map names to their own listeners.
	EgressDial egress.DialFunc
	// EgressRoots verifies the hosts the egress proxy reaches over TLS when
	// it intercepts HTTPS for a Credential Vault binding; nil means the
	// system's roots. Tests trust their own servers' certificates.
	EgressRoots *x509.CertPool
	// Snapshots resolves snapshotId on create; nil means every id is unknown (404).
	Snapshots SnapshotStore

	// Images says where the images creates name come from (the server
	// fills in Dir, under DataDir, and Owner); nil runs every sandbox on
	// the host's programs (osb server --host-programs), whatever its
	// image. Only isolated sandboxes run images.
	Images *image.Options
	// AllowHostPaths are the prefixes under which host volumes may be
	// (the real server's storage.allowed_host_paths); none: every host
	// volume is refused.
	AllowHostPaths []string
}

// PortHandler makes the handler of one port for one sandbox; it is called
// once, when the sandbox is created.
type PortHandler func(sb *sandbox.Sandbox) http.Handler

// SnapshotStore restores sandboxes from snapshots.
type SnapshotStore interface {
	// Restore fills fsDir (the new sandbox's empty FSDir) from the snapshot
	// and returns the entrypoint recorded with it. It returns an error
	// wrapping ErrSnapshotNotFound for an unknown id.
	Restore(snapshotID, fsDir string) (entrypoint []string, err error)
}

// ErrSnapshotNotFound is what a SnapshotStore returns for an unknown id.
var ErrSnapshotNotFound = errors.New("snapshot not found")

// SecureAccessHeader carries a sandbox's secret: every endpoint hands it out
// in its headers, and the data plane requires it (or the API key). The
// name is upstream's secure-access header.
const SecureAccessHeader = "OpenSandbox-Secure-Access"

// apiKeyHeader carries the API key on lifecycle requests.
const apiKeyHeader = "OPEN-SANDBOX-API-KEY"

// Well-known sandbox ports.
const (
	ExecdPort  = 44772
	EgressPort = 18080
)

// Server is a local OpenSandbox lifecycle server.
type Server struct {
	opts      Options
	dataDir   string
	tempDir   bool     // dataDir was created by New and is removed by Close
	lock      *os.File // holds the data dir's lock until Close
	isolation sandbox.Isolation
	log       *logger
	egressCA  *egress.CA // signs the certificates of intercepted HTTPS; sandboxes trust it

	listener net.Listener
	http     *http.Server

	mu      sync.Mutex
	records map[string]*record
	seq     uint64
	closed  bool

	templates  *templateStore // templates.go
	snapshots  *snapshotStore // snapshots.go
	images     *image.Store   // nil: host programs (images.go)
	background sync.WaitGroup // snapshot captures, template checks, spares; Close waits for them
	spare      spare          // spare.go

	closeOnce sync.Once
	closeErr  error
}

// New prepares a server; Start makes it listen.
func New(opts Options) (*Server, error) {
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:8080"
	}
	if opts.MinTimeout <= 0 {
		opts.MinTimeout = 60 * time.Second
	}
	s := &Server{opts: opts, records: map[string]*record{}, log: newLogger(opts.Log)}
	s.opts.PortHandlers = s.withEgressSidecar(opts.PortHandlers)
	s.isolation = sandbox.Probe()
	if opts.NoIsolation {
		s.isolation = sandbox.Isolation{Reason: "disabled by configuration"}
	}
	var err error
	if s.egressCA, err = egress.NewCA(); err != nil {
		return nil, fmt.Errorf("egress proxy CA: %w", err)
	}
	if err := s.initDataDir(); err != nil {
		return nil, err
	}
	if err := s.openStores(); err != nil {
		unlock(s.lock)
		return nil, err
	}
	if err := s.openImages(); err != nil {
		unlock(s.lock)
		return nil, err
	}
	return s, nil
}

func (s *Server) initDataDir() error {
	dir := s.opts.DataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "osb-server-")
		if err != nil {
			return err
		}
		dir, s.tempDir = d, true
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	s.dataDir = abs
	if err := os.MkdirAll(filepath.Join(abs, "sandboxes"), 0o700); err != nil {
		return err
	}
	if s.lock, err = lockDataDir(abs); err != nil {
		return err
	}
	if err := s.removeStaleSandboxes(); err != nil {
		unlock(s.lock)
		return err
	}
	return nil
}

// Isolated reports whether sandboxes run in their own namespaces.
func (s *Server) Isolated() bool { return s.isolation.Available }

// Start binds the listener and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.opts.Listen)
	if err != nil {
		return err
	}
	s.listener = ln
	s.http = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 30 * time.Second}
	go s.http.Serve(ln)
	s.log.event("listening on %s (data dir %s, isolated: %v)", s.URL(), s.dataDir, s.Isolated())
	s.logOpenFiles()
	s.fillSpare()
	return nil
}

// Addr is host:port of the listener ("" before Start).
func (s *Server) Addr() string {
	if s.listener == nil {
		return ""
	}
	return s.listener.Addr().String()
}

// URL is "http://" + Addr.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Close kills every sandbox, removes its files (and a temp data dir), and
// stops the listeners. Idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	s.mu.Lock()
	s.closed = true
	recs := make([]*record, 0, len(s.records))
	for id, rec := range s.records {
		if rec.timer != nil {
			rec.timer.Stop()
		}
		recs = append(recs, rec)
		delete(s.records, id)
	}
	s.mu.Unlock()
	var errs []error
	if s.http != nil {
		errs = append(errs, s.http.Close())
	}
	// Kill all at once first: one /proc scan serves every sandbox.
	sbs := make([]*sandbox.Sandbox, len(recs))
	for i, rec := range recs {
		rec.data.close()
		sbs[i] = rec.sb
	}
	errs = append(errs, sandbox.KillAll(sbs))
	var wg sync.WaitGroup
	errc := make(chan error, len(recs))
	for _, rec := range recs {
		wg.Go(func() { errc <- s.destroy(rec, "server shutdown") })
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		errs = append(errs, err)
	}
	s.background.Wait()
	errs = append(errs, s.removeSpare())
	sandbox.ReleaseCgroups()
	if s.tempDir {
		errs = append(errs, sandbox.RemoveTree(s.dataDir))
	}
	if s.lock != nil {
		errs = append(errs, unlock(s.lock))
	}
	return errors.Join(errs...)
}

// Run serves until ctx is done, for `osb server`: it prints the URL (and a
// warning when sandboxes are not isolated) to stderr once ready, and to
// opts.Ready, then on
// cancellation kills every sandbox and returns.
func Run(ctx context.Context, opts Options, stderr io.Writer) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	if !s.Isolated() && !opts.AcceptNoIsolation {
		s.Close()
		return fmt.Errorf("sandboxes cannot be isolated on this host (%s); refusing to start. "+
			"--unsafe-no-isolation runs them directly on this host, with no security boundary", s.isolation.Reason)
	}
	if err := s.Start(); err != nil {
		s.Close()
		return err
	}
	if !s.Isolated() {
		fmt.Fprintf(stderr, "WARNING: sandboxes are NOT isolated (%s): their commands run directly on this host as this user, with full access to its files and network.\n", s.isolation.Reason)
	} else if cg := sandbox.Cgroups(); !cg.Available {
		if opts.AllowUnlimited {
			fmt.Fprintf(stderr, "WARNING: sandboxes have NO resource limits (%s): one can use all of this host's CPU, memory and processes.\n", cg.Reason)
		} else {
			fmt.Fprintf(stderr, "WARNING: resource limits are unavailable (%s): creating a sandbox fails; --allow-unlimited accepts sandboxes without limits.\n", cg.Reason)
		}
	}
	fmt.Fprintf(stderr, "osb server listening on %s\n", s.URL())
	if opts.Ready != nil {
		fmt.Fprintln(opts.Ready, s.URL())
		if c, ok := opts.Ready.(io.Closer); ok {
			c.Close()
		}
	}
	<-ctx.Done()
	if err := s.Close(); err != nil {
		fmt.Fprintf(stderr, "osb server: cleanup: %v\n", err)
	}
	return nil
}

// DataDir is the absolute data directory (sandboxes live in DataDir/sandboxes).
func (s *Server) DataDir() string { return s.dataDir }

// Sandbox returns the runtime of a live sandbox, for in-process callers and tests.
func (s *Server) Sandbox(id string) (*sandbox.Sandbox, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.records[id]
	if rec == nil {
		return nil, false
	}
	return rec.sb, true
}
