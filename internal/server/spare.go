package server

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// A spare is a sandbox made ahead of any request (sandbox.Prepare): its
// init started in its namespaces and joined to its cgroup, waiting for what
// a create says. Starting a process and, on cgroup v1, joining a cgroup
// (which waits out an RCU grace period) are most of a create's wait, and
// neither depends on the request: with a spare they happen while the
// server is idle, and a create only configures it. One at a time: a create
// that finds none (two at once, or one right after another) makes its
// sandbox itself, as without spares.
//
// A spare's root is built too: it is made for the root of the last create
// (the host's programs, or an image), as the next is likely to ask for the
// same. A create for another root discards it; the next spare has that one.
// Its cgroup has the last create's limits, for the same reason: a create
// with the same ones leaves them as they are.
type spare struct {
	mu      sync.Mutex
	sb      *sandbox.Sandbox
	filling chan struct{}   // closed when the spare being made is there (or failed); nil: none is
	root    *sandbox.Rootfs // the root of the last create, which the next spare gets
	limits  sandbox.Limits  // the limits of the last create (none yet: zero), which it gets too
}

// sparesOn says whether creates use spares: isolated sandboxes with
// cgroups (every create then has limits that Prepare can stand in for).
func (s *Server) sparesOn() bool {
	return s.isolation.Available && sandbox.Cgroups().Available && !s.opts.NoSpare
}

// takeSpare hands over the spare, if there is one that fits cfg (its
// root); one that does not is discarded. One being made is waited for: it
// is nearer done than a sandbox made from nothing, which would compete
// with it for the CPU. The create that takes it has the next made once it
// has answered (fillSpare), for the same reason.
func (s *Server) takeSpare(ctx context.Context, cfg sandbox.Config) *sandbox.Sandbox {
	s.spare.mu.Lock()
	filling := s.spare.filling
	s.spare.mu.Unlock()
	if filling != nil {
		select {
		case <-filling:
		case <-ctx.Done():
			return nil
		}
	}
	s.spare.mu.Lock()
	defer s.spare.mu.Unlock()
	s.spare.root, s.spare.limits = cfg.Rootfs, *cfg.Limits
	sb := s.spare.sb
	s.spare.sb = nil
	if sb != nil && !sb.Fits(cfg) {
		if !s.goBackground(func() { s.discardSpare(sb) }) {
			s.discardSpare(sb)
		}
		return nil
	}
	return sb
}

// fillSpare makes a spare in the background, unless there is one or one
// is being made, or the server is closing.
func (s *Server) fillSpare() {
	if !s.sparesOn() {
		return
	}
	s.spare.mu.Lock()
	defer s.spare.mu.Unlock()
	if s.spare.sb != nil || s.spare.filling != nil {
		return
	}
	filling := make(chan struct{})
	started := s.goBackground(func() {
		sb, err := s.makeSpare()
		if err != nil {
			s.log.event("making a spare sandbox: %v", err)
		}
		s.spare.mu.Lock()
		s.spare.sb, s.spare.filling = sb, nil
		s.spare.mu.Unlock()
		close(filling)
	})
	if started {
		s.spare.filling = filling
	}
}

// makeSpare prepares a sandbox with the limits and the root of the last
// create (before any, the default limits), which the create that takes it
// replaces with its own where they differ.
// None is made for an image where its overlay was refused: its root is
// then a copy of the layers, made when the sandbox starts.
func (s *Server) makeSpare() (*sandbox.Sandbox, error) {
	s.spare.mu.Lock()
	root, l := s.spare.root, s.spare.limits
	s.spare.mu.Unlock()
	if root != nil && sandbox.OverlayRefused() {
		return nil, nil
	}
	if l.PIDs == 0 {
		var err error
		if l, err = sandbox.ParseLimits(s.withDefaultLimits(nil)); err != nil {
			return nil, err
		}
		sandbox.OpenFiles().Fit(&l)
	}
	id := newID()
	sb, err := sandbox.New(sandbox.Config{ID: id, Dir: filepath.Join(s.dataDir, "sandboxes", id), Isolated: true, Agent: true, Rootfs: root})
	if err != nil {
		return nil, err
	}
	if err := sb.Prepare(l); err != nil {
		s.discardSpare(sb)
		return nil, err
	}
	return sb, nil
}

// discardSpare removes a spare no create will take.
func (s *Server) discardSpare(sb *sandbox.Sandbox) {
	if err := sb.Remove(); err != nil {
		s.log.event("removing a spare sandbox: %v", err)
	}
}

// removeSpare removes the spare, for Close, once no more is being made.
func (s *Server) removeSpare() error {
	s.spare.mu.Lock()
	sb := s.spare.sb
	s.spare.sb = nil
	s.spare.mu.Unlock()
	if sb == nil {
		return nil
	}
	return sb.Remove()
}
