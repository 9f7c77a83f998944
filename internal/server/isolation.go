package server

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	_ "github.com/osb-dev/osb/internal/server/agent" // lets this binary be a sandbox's agent
	"github.com/osb-dev/osb/internal/server/execd"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// execdFor is a sandbox's execd: the agent running inside an isolated
// sandbox, reached through its unix socket, or else served here. A request
// the agent does not answer is an ExecdUnreachable event of the sandbox (at
// most one a minute: a client retrying must not flood the history); the
// sandbox's init restarts an agent that died, and the first answer of the
// new one is an ExecdRestarted event.
func (s *Server) execdFor(rec *record) http.Handler {
	sock := rec.sb.AgentSocket()
	if sock == "" {
		return execd.New(rec.sb, execd.Options{})
	}
	var last atomic.Int64
	unreachable := func(err error) {
		now := time.Now().UnixNano()
		if prev := last.Load(); now-prev > int64(time.Minute) && last.CompareAndSwap(prev, now) {
			s.noteEvent(rec.id, "ExecdUnreachable", err.Error())
		}
	}
	restarted := func() { s.noteEvent(rec.id, "ExecdRestarted", "execd died and the sandbox's init started a new one") }
	serving := func(agent string) { s.noteExecdServing(rec, sandbox.AgentGeneration(agent)) }
	return execd.Remote(sock, execd.Watch{Unreachable: unreachable, Restarted: restarted, NewAgent: serving}, apiKeyHeader, SecureAccessHeader)
}

// noteExecdServing records that the execd the init started after gen
// deaths answers (execdDown).
func (s *Server) noteExecdServing(rec *record, gen int) {
	s.mu.Lock()
	rec.execdServed = max(rec.execdServed, gen)
	s.mu.Unlock()
}

// execdDown is why a running sandbox's status says its execd is down,
// from its death until a restarted one answers; ok is false while it
// serves. The init says when it died and when it started the next one,
// and the new one's answers which of them answers: the two come by
// different ways, in either order: an answer from the agent started after
// the last death says it serves, even before the init's report that it
// restarted it has been read. Call with Server.mu held.
func (rec *record) execdDown() (message string, ok bool) {
	if rec.state != stateRunning || rec.sb == nil {
		return "", false
	}
	d, ok := rec.sb.ExecdDeaths()
	if !ok || d.Deaths <= rec.execdServed {
		return "", false
	}
	return d.Message(), true
}

// startEgress opens the egress proxy inside an isolated sandbox's network
// (sandbox.EgressProxyAddr, where its HTTP(S)_PROXY points): its only way
// out, so the sidecar's policy is enforced from then on. A sandbox without
// a sidecar (template sandboxes) gets a listener that refuses everything.
func (s *Server) startEgress(rec *record) error {
	if !rec.sb.Isolated() {
		return nil
	}
	serve := rec.data.enforceEgress() // the data plane closes it with the sandbox
	if serve == nil {
		serve = func(c net.Conn) { c.Close() }
	}
	return rec.sb.ListenInside(sandbox.EgressProxyAddr, serve)
}

// defaultLimits are the limits the official CLI and SDK send when none are
// given; a request that names no cpu or memory (resourceLimits: {}) gets
// them too, rather than none at all.
var defaultLimits = map[string]string{"cpu": "1", "memory": "2Gi"}

// withDefaultLimits fills in defaultLimits for the keys limits lacks,
// unless the operator accepted unlimited sandboxes (--allow-unlimited).
func (s *Server) withDefaultLimits(limits map[string]string) map[string]string {
	if s.opts.AllowUnlimited {
		return limits
	}
	out := maps.Clone(defaultLimits)
	maps.Copy(out, limits)
	return out
}

// limitsFor is the cgroup limits of a new sandbox: nil where the operator
// accepted unlimited sandboxes on a host without cgroups, or for an
// unisolated one there (it has no boundary anyway); otherwise an isolated
// sandbox without enforceable limits is refused.
func (s *Server) limitsFor(req createRequest) (*sandbox.Limits, int, string, error) {
	l, err := sandbox.ParseLimits(s.withDefaultLimits(req.limits))
	if err != nil {
		return nil, http.StatusBadRequest, codeInvalidParameter, err
	}
	cg := sandbox.Cgroups()
	if !cg.Available && !s.isolation.Available {
		return nil, 0, "", nil
	}
	if !cg.Available {
		if s.opts.AllowUnlimited {
			return nil, 0, "", nil
		}
		return nil, http.StatusServiceUnavailable, codeCreateFailed, errors.New("Resource limits cannot be enforced on this host (" + cg.Reason +
			"); the operator can start osb server with --allow-unlimited to run sandboxes without limits.")
	}
	return &l, 0, "", nil
}

// fitOpenFiles lowers an isolated sandbox's pids cap to the largest whose
// processes stay within their share of the host's file-max
// (sandbox.FileBound). A cap the request named is lowered with a word for
// its events (the message returned; "" when not lowered); the default
// simply is the host's largest where that is smaller. An unisolated
// sandbox has no open-files bound to keep.
func (s *Server) fitOpenFiles(l *sandbox.Limits, req createRequest) string {
	if l == nil || !s.isolation.Available {
		return ""
	}
	b := sandbox.OpenFiles()
	was := b.Fit(l)
	if _, asked := req.limits["pids"]; was == 0 || !asked {
		return ""
	}
	return fmt.Sprintf("pids %d lowered to %d: with the init's and execd's reserve of %d, each of %d processes has %d open files, within a quarter (%d) of the host's file-max (%d)",
		was, l.PIDs, b.Reserve(), l.PIDs+b.Reserve(), b.MinNoFile(), b.Share, b.FileMax)
}

// logOpenFiles states at start how file-max bounds isolated sandboxes.
func (s *Server) logOpenFiles() {
	b := sandbox.OpenFiles()
	if !s.isolation.Available || !sandbox.Cgroups().Available || b.FileMax == 0 {
		return
	}
	s.log.event("open files: file-max %d, a sandbox's share %d (a quarter); largest pids cap %d (plus %d for the init and execd, %d open files each)",
		b.FileMax, b.Share, b.MaxPIDs, b.Reserve(), b.MinNoFile())
	if !b.Holds() {
		s.log.event("WARNING: file-max %d is too small for a pids cap of %d: a sandbox may hold more than its share of open files", b.FileMax, b.MaxPIDs)
	}
}
