package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/osb-dev/osb/internal/server/egress"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// Sandbox states used here. The create response already says Running: the
// entrypoint has been started when it is sent (newest spec behaviour).
const (
	stateRunning  = "Running"
	statePausing  = "Pausing"
	statePaused   = "Paused"
	stateResuming = "Resuming"
	stateStopping = "Stopping"
	// A sandbox whose entrypoint has ended, as a real deployment shows an
	// exited container: Terminated after exit code 0, else Failed.
	stateTerminated = "Terminated"
	stateFailed     = "Failed"
)

// Reasons of the settled states, as the real server's Docker runtime names
// them, so that clients keyed on them work against both.
const (
	reasonRunning     = "CONTAINER_RUNNING"
	reasonPaused      = "CONTAINER_PAUSED"
	reasonExited      = "CONTAINER_EXITED"
	reasonExitedError = "CONTAINER_EXITED_ERROR"
	// Running, but its execd died and no new one answers yet (isolation.go).
	reasonExecdDown = "EXECD_UNAVAILABLE"
)

// record is one sandbox known to the server. Immutable fields are set at
// creation; the rest is guarded by Server.mu.
type record struct {
	id         string
	seq        uint64
	imageURI   string // "" when restored from a snapshot
	snapshotID string
	entrypoint []string
	extensions map[string]string
	platform   json.RawMessage // the request's platform, or nil: left out of answers
	createdAt  time.Time
	sb         *sandbox.Sandbox
	data       *dataPlane
	statusMsg  string // states the isolation and what the sandbox runs
	exitMsg    string // once the entrypoint has ended: its exit, the status message from then on
	exitCode   *int   // the entrypoint's, once it has ended
	ranImage   string // the image whose root it runs; "" for host programs
	// madeVolumes are named volumes made for this sandbox alone
	// (deleteOnSandboxTermination): removed with it.
	madeVolumes []string
	claims      []string // every named volume it mounts
	lowered     string   // why its pids cap is below the one asked for (isolation.go), or ""
	origin      string   // originTemplate for sandboxes created from a template (networkpolicy.go)
	// renewExtend is the renew-on-access extension (0: off; dataplane.go).
	renewExtend time.Duration

	metadata  map[string]string
	expiresAt *time.Time // nil: manual cleanup
	timer     *time.Timer
	state     string
	reason    string
	changedAt time.Time
	events    []event // lifecycle history for diagnostics (diagnostics.go)
	// execdServed is how many execd deaths are over: a new one answered.
	execdServed int

	egressIntent egress.Policy // template sandboxes only: their stored egress policy (networkpolicy.go)
}

type statusJSON struct {
	State            string `json:"state"`
	Reason           string `json:"reason,omitempty"`
	Message          string `json:"message,omitempty"`
	LastTransitionAt string `json:"lastTransitionAt"`
}

type imageJSON struct {
	URI string `json:"uri"`
}

// sandboxJSON is both the Sandbox schema and (without image/snapshotId)
// CreateSandboxResponse.
type sandboxJSON struct {
	ID         string            `json:"id"`
	Image      *imageJSON        `json:"image,omitempty"`
	SnapshotID string            `json:"snapshotId,omitempty"`
	Status     statusJSON        `json:"status"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Extensions map[string]string `json:"extensions,omitempty"`
	Platform   json.RawMessage   `json:"platform,omitempty"` // left out, never null, when the request named none
	Entrypoint []string          `json:"entrypoint"`
	ExpiresAt  string            `json:"expiresAt,omitempty"`
	CreatedAt  string            `json:"createdAt"`
}

// formatTime renders timestamps as RFC 3339 UTC with microseconds, as the
// real (Python) server does.
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// view renders the record; call with Server.mu held.
func (rec *record) view(full bool) sandboxJSON {
	rec.noteExit()
	message := rec.statusMsg
	if rec.exitMsg != "" {
		message = rec.exitMsg
	}
	reason := rec.reason
	if down, ok := rec.execdDown(); ok {
		reason, message = reasonExecdDown, down
	}
	v := sandboxJSON{
		ID: rec.id,
		Status: statusJSON{State: rec.state, Reason: reason, Message: message,
			LastTransitionAt: formatTime(rec.changedAt)},
		Extensions: rec.extensions,
		Platform:   rec.platform,
		Entrypoint: rec.entrypoint,
		CreatedAt:  formatTime(rec.createdAt),
	}
	// No metadata is left out, as the real server leaves it out.
	if len(rec.metadata) > 0 {
		v.Metadata = maps.Clone(rec.metadata)
	}
	if rec.expiresAt != nil {
		v.ExpiresAt = formatTime(*rec.expiresAt)
	}
	if full {
		v.SnapshotID = rec.snapshotID
		if rec.imageURI != "" {
			v.Image = &imageJSON{URI: rec.imageURI}
		}
	}
	return v
}

// setState moves the sandbox to state; reason "" gives a settled state
// its usual reason.
func (rec *record) setState(state, reason string) {
	if reason == "" {
		reason = map[string]string{stateRunning: reasonRunning, statePaused: reasonPaused}[state]
	}
	rec.state, rec.reason, rec.changedAt = state, reason, time.Now()
}

// noteExit moves a running sandbox whose entrypoint has ended to
// Terminated or Failed, as the real server shows an exited container: the
// data plane stops answering and the events say so. Call with Server.mu
// held; it costs a failed open while the entrypoint runs.
func (rec *record) noteExit() {
	if rec.state != stateRunning || rec.sb == nil {
		return
	}
	code, at, ended := rec.sb.EntrypointExit()
	if !ended {
		return
	}
	rec.state, rec.reason, rec.changedAt = stateFailed, reasonExitedError, at
	rec.exitMsg = fmt.Sprintf("Sandbox container exited with code %d.", code)
	if code == 0 {
		rec.state, rec.reason = stateTerminated, reasonExited
		rec.exitMsg = "Sandbox container exited successfully."
	}
	rec.exitCode = &code
	rec.events = append(rec.events, event{at: at, reason: "Exited", message: fmt.Sprintf("with code %d", code)})
}

// lookup finds a sandbox or writes the 404; call without Server.mu.
func (s *Server) lookup(w http.ResponseWriter, id string) *record {
	s.mu.Lock()
	rec := s.records[id]
	s.mu.Unlock()
	if rec == nil {
		writeError(w, http.StatusNotFound, codeNotFound, "Sandbox "+id+" not found.")
	}
	return rec
}

// remove takes a sandbox out of the store; the caller then destroys it.
// It returns nil when the sandbox was already gone.
func (s *Server) remove(id string) *record {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.records[id]
	if rec == nil || rec.state == stateStopping {
		return nil // unknown, or already being removed by expiry
	}
	delete(s.records, id)
	if rec.timer != nil {
		rec.timer.Stop()
	}
	return rec
}

// destroy stops a removed sandbox's data plane, kills its processes and
// deletes its files.
func (s *Server) destroy(rec *record, why string) error {
	if rec.data != nil {
		rec.data.close()
	}
	err := rec.sb.Remove()
	if err == nil {
		s.removeVolumes(rec.madeVolumes)
	}
	s.log.event("sandbox %s removed (%s)", rec.id, why)
	if err != nil {
		s.log.event("sandbox %s: cleanup: %v", rec.id, err)
	}
	return err
}
