package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"time"

	"github.com/osb-dev/osb/internal/server/image"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// defaultEntrypoint is what the real server runs for snapshot restores
// without an entrypoint.
var defaultEntrypoint = []string{"tail", "-f", "/dev/null"}

// createRequest is a validated CreateSandboxRequest.
type createRequest struct {
	imageURI   string
	snapshotID string
	templateID string
	entrypoint []string
	timeout    *time.Duration
	env        map[string]string
	metadata   map[string]string
	extensions map[string]string
	platform   json.RawMessage
	egress     egressSeed // networkPolicy, credentialProxy (networkpolicy.go)
	limits     map[string]string
	imageAuth  *image.Auth
	volumes    []volume
}

func (s *Server) createSandbox(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	req, ok := s.parseCreate(w, body)
	if !ok {
		return
	}
	if req.templateID != "" {
		if status, code, err := s.applyTemplate(&req); err != nil {
			writeError(w, status, code, err.Error())
			return
		}
	}
	rec, status, code, err := s.provision(r.Context(), req)
	defer s.fillSpare()
	if err != nil {
		writeError(w, status, code, err.Error())
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.destroy(rec, "server shutting down")
		writeError(w, http.StatusServiceUnavailable, codeShuttingDown, "The server is shutting down.")
		return
	}
	s.register(rec, req.timeout)
	rec.noteCreated(req)
	view := rec.view(false)
	s.mu.Unlock()
	s.log.event("sandbox %s created (image %q, isolated %v)", rec.id, rec.imageURI, rec.sb.Isolated())
	w.Header().Set("Location", "http://"+r.Host+"/v1/sandboxes/"+rec.id)
	writeJSON(w, http.StatusAccepted, view)
}

// provision creates the sandbox directory, restores a snapshot into it if
// asked, starts the entrypoint and the data plane. On failure nothing is left.
func (s *Server) provision(ctx context.Context, req createRequest) (rec *record, status int, code string, err error) {
	limits, status, code, err := s.limitsFor(req)
	if err != nil {
		return nil, status, code, err
	}
	lowered := s.fitOpenFiles(limits, req)
	run, status, code, err := s.imageFor(ctx, req)
	if err != nil {
		return nil, status, code, err
	}
	mounts, madeVolumes, status, code, err := s.mountsFor(req.volumes)
	if err != nil {
		return nil, status, code, err
	}
	defer closeMounts(mounts)
	env := req.env
	if run.rootfs != nil {
		env = run.env(req.env)
	}
	// Only a sandbox that asked for Credential Proxy trusts the egress CA,
	// as upstream installs its MITM CA only then.
	var trustedCA []byte
	if req.egress.credentialProxy {
		trustedCA = s.egressCA.PEM()
	}
	sb, err := s.newSandbox(ctx, sandbox.Config{Env: env, Limits: limits, TrustedCA: trustedCA, Rootfs: run.rootfs, Mounts: mounts}, req.snapshotID != "")
	if err != nil {
		s.removeVolumes(madeVolumes)
		return nil, http.StatusInternalServerError, codeCreateFailed, err
	}
	fail := func(status int, code string, err error) (*record, int, string, error) {
		sb.Remove()
		s.removeVolumes(madeVolumes)
		return nil, status, code, err
	}
	entrypoint := req.entrypoint
	if req.snapshotID != "" {
		ep, status, code, err := s.restore(req.snapshotID, sb)
		if err != nil {
			return fail(status, code, err)
		}
		if entrypoint == nil {
			entrypoint = ep
		}
	}
	if len(entrypoint) == 0 {
		entrypoint = defaultEntrypoint
	}
	if err := sb.Start(entrypoint); err != nil {
		return fail(http.StatusInternalServerError, codeCreateFailed, err)
	}
	rec = &record{id: sb.ID(), imageURI: req.imageURI, snapshotID: req.snapshotID, entrypoint: entrypoint,
		extensions: req.extensions, platform: req.platform, sb: sb,
		statusMsg: cmp.Or(run.status, s.statusMessage()), metadata: req.metadata, madeVolumes: madeVolumes,
		claims: claimsOf(req.volumes), lowered: lowered}
	if run.rootfs != nil {
		rec.ranImage = run.uri
	}
	if rec.metadata == nil {
		rec.metadata = map[string]string{}
	}
	if req.templateID != "" {
		rec.origin = originTemplate
	}
	rec.renewExtend, _ = renewExtension(req.extensions)
	rec.data = s.startDataPlane(rec)
	if err := s.startEgress(rec); err != nil {
		rec.data.close()
		return fail(http.StatusInternalServerError, codeCreateFailed, err)
	}
	s.seedEgress(rec, req.egress)
	return rec, 0, "", nil
}

// newSandbox is the sandbox of a create, configured by cfg's request
// fields: the spare, or one made now. A snapshot restored into an image's
// root must be there before the root is mounted, which a spare's is.
func (s *Server) newSandbox(ctx context.Context, cfg sandbox.Config, restoring bool) (*sandbox.Sandbox, error) {
	if cfg.Limits != nil && cfg.Limits.PIDs > 0 && !(restoring && cfg.Rootfs != nil) {
		if sb := s.takeSpare(ctx, cfg); sb != nil {
			sb.Use(cfg)
			return sb, nil
		}
	}
	cfg.ID = newID()
	cfg.Dir = filepath.Join(s.dataDir, "sandboxes", cfg.ID)
	cfg.Isolated, cfg.Agent = s.isolation.Available, true
	return sandbox.New(cfg)
}

func (s *Server) restore(snapshotID string, sb *sandbox.Sandbox) ([]string, int, string, error) {
	notFound := fmt.Errorf("Snapshot %s not found.", snapshotID)
	if s.opts.Snapshots == nil {
		return nil, http.StatusNotFound, codeSnapshotNotFound, notFound
	}
	var ep []string
	var err error
	if _, _, image := sb.WritableRoot(); image && s.opts.Snapshots == SnapshotStore(s.snapshots) {
		// The server's own store also restores an image sandbox's root.
		ep, err = s.snapshots.restoreInto(snapshotID, sb.FSDir(), sb.UpperDir())
	} else {
		ep, err = s.opts.Snapshots.Restore(snapshotID, sb.FSDir())
	}
	switch {
	case errors.Is(err, ErrSnapshotNotFound):
		return nil, http.StatusNotFound, codeSnapshotNotFound, notFound
	case errors.Is(err, errSnapshotNotReady):
		return nil, http.StatusConflict, codeSnapshotNotReady, err
	case err != nil:
		return nil, http.StatusInternalServerError, codeCreateFailed, err
	}
	return ep, 0, "", nil
}

// statusMessage is every sandbox's status.message: the honest limits.
func (s *Server) statusMessage() string {
	if s.isolation.Available {
		return "local sandbox, isolated by user, mount, pid, uts, ipc and network namespaces; image not pulled, host programs used"
	}
	return "local sandbox, not isolated; image not pulled, host programs used"
}

// register stores a provisioned sandbox, stamps its creation time (so that
// creation order and store order agree) and arms its expiry timer. Call with
// s.mu held.
func (s *Server) register(rec *record, timeout *time.Duration) {
	s.seq++
	rec.seq = s.seq
	rec.createdAt = time.Now()
	rec.setState(stateRunning, "")
	s.records[rec.id] = rec
	if timeout == nil {
		return
	}
	exp := rec.createdAt.Add(*timeout)
	rec.expiresAt = &exp
	id := rec.id
	rec.timer = time.AfterFunc(*timeout, func() { s.expire(id) })
}

// expire removes a sandbox whose expiresAt has passed. A renew may have
// moved expiresAt after the timer fired; then it re-arms. The sandbox shows
// Stopping while it is torn down and disappears (404) only once its
// processes and files are gone.
func (s *Server) expire(id string) {
	s.mu.Lock()
	rec := s.records[id]
	if rec == nil || rec.expiresAt == nil || rec.state == stateStopping {
		s.mu.Unlock()
		return
	}
	if d := time.Until(*rec.expiresAt); d > 0 {
		rec.timer.Reset(d)
		s.mu.Unlock()
		return
	}
	rec.setState(stateStopping, "ttl_expiry")
	s.mu.Unlock()
	s.destroy(rec, "expired")
	s.mu.Lock()
	delete(s.records, id)
	s.mu.Unlock()
}

// newID returns 32 lowercase hex characters: long enough that any
// 8-character prefix a user types is almost surely unique.
func newID() string { return randomHex(16) }

// readObject decodes a JSON object body, or writes FastAPI's 422.
func readObject(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	_, v, ok := readValue(w, r)
	if !ok {
		return nil, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		writeDetails(w, []detail{{Type: "model_attributes_type", Loc: []any{"body"},
			Msg: "Input should be a valid dictionary or object to extract fields from", Input: v}})
		return nil, false
	}
	return obj, true
}

// readValue decodes any JSON body (also returned raw), or writes FastAPI's 422.
func readValue(w http.ResponseWriter, r *http.Request) ([]byte, any, bool) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidParameter, "cannot read request body: "+err.Error())
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		msg := "JSON decode error"
		if len(bytes.TrimSpace(raw)) == 0 {
			writeDetails(w, []detail{missing([]any{"body"}, nil)})
			return nil, nil, false
		}
		writeDetails(w, []detail{{Type: "json_invalid", Loc: []any{"body", 0}, Msg: msg, Input: map[string]any{},
			Ctx: map[string]any{"error": fmt.Sprint(err)}}})
		return nil, nil, false
	}
	return raw, v, true
}

// parseCreate validates the create body: FastAPI-style 422s for shape
// errors (all reported at once), then the server's own 400s.
func (s *Server) parseCreate(w http.ResponseWriter, body map[string]any) (createRequest, bool) {
	var v fields
	req := createRequest{
		snapshotID: v.str(body, "snapshotId"),
		templateID: v.str(body, "templateId"),
		entrypoint: v.strList(body, "entrypoint", 1),
		env:        v.strMap(body, "env"),
		metadata:   v.strMap(body, "metadata"),
		extensions: v.strMap(body, "extensions"),
	}
	req.imageURI = v.image(body)
	req.imageAuth = imageAuth(body)
	req.volumes = v.volumes(body)
	req.timeout = v.timeout(body, s.opts.MinTimeout)
	v.boolean(body, "secureAccess") // every sandbox has secured access (dataplane.go)
	req.platform = v.platform(body)
	req.egress = v.egressSeed(body)
	v.strMap(body, "resourceRequests")
	limits, hasLimits := body["resourceLimits"]
	req.limits = v.strMap(body, "resourceLimits")
	_, pool := req.extensions["poolRef"]
	if (!hasLimits || limits == nil) && !pool && req.templateID == "" {
		v.add(missing([]any{"body", "resourceLimits"}, body))
	}
	_, hasImage := body["image"]
	sources := 0
	for _, given := range []bool{hasImage, req.snapshotID != "", req.templateID != ""} {
		if given {
			sources++
		}
	}
	switch {
	case sources > 1 || sources == 0 && !pool:
		v.add(detail{Type: "value_error", Loc: []any{"body"}, Input: body,
			Msg: "Value error, exactly one of image, snapshotId or templateId must be provided"})
	case hasImage && body["entrypoint"] == nil:
		v.add(missing([]any{"body", "entrypoint"}, body))
	}
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return req, false
	}
	if code, msg := refuseCreate(&req, body, pool); msg != "" {
		writeError(w, http.StatusBadRequest, code, msg)
		return req, false
	}
	if code, msg := s.checkVolumes(req.volumes); msg != "" {
		writeError(w, http.StatusBadRequest, code, msg)
		return req, false
	}
	return req, true
}

// refuseCreate gives the code and message of the first 400 the server itself
// answers a well-formed request with, or an empty message.
func refuseCreate(req *createRequest, body map[string]any, pool bool) (code, msg string) {
	if req.templateID != "" {
		if msg := checkTemplateMode(body); msg != "" {
			return codeInvalidParameter, msg
		}
	}
	if msg := unsupported(body, pool); msg != "" {
		return codeNotSupported, msg
	}
	if err := checkLabels(req.metadata); err != nil {
		return codeInvalidLabel, err.Error()
	}
	if msg := checkPlatform(req.platform); msg != "" {
		return codeInvalidParameter, msg
	}
	if _, msg := renewExtension(req.extensions); msg != "" {
		return codeInvalidParameter, msg
	}
	return codeInvalidParameter, req.egress.problem
}

// unsupported names request features the local runtime cannot honour; they
// are rejected rather than silently ignored.
func unsupported(body map[string]any, pool bool) string {
	switch {
	case pool:
		return "Pools (extensions.poolRef) are not supported by the local server."
	case body["lifecycle"] != nil:
		return "Lifecycle hooks are not supported by the local server."
	}
	return ""
}

// checkPlatform rejects platforms this host cannot satisfy.
func checkPlatform(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var p struct{ OS, Arch string }
	json.Unmarshal(raw, &p)
	if p.OS != runtime.GOOS || p.Arch != runtime.GOARCH {
		return fmt.Sprintf("Platform %s/%s cannot be satisfied: this server runs %s/%s.", p.OS, p.Arch, runtime.GOOS, runtime.GOARCH)
	}
	return ""
}
