package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Templates. On the real server a template is a golden-image build that
// fast-sandbox runs asynchronously. Here nothing is built: a template is a
// stored preset (image, entrypoint, env, resources, metadata) that a create
// with templateId applies. It is checked in the background like a build:
// it starts Pending and turns Succeeded, or Failed with the reason.

// codeTemplateNotFound is the real server's code for an unknown template,
// and for a create naming a template that is not Succeeded (404 as well).
const codeTemplateNotFound = "FSB::TEMPLATE_NOT_FOUND"

// Template build phases.
const (
	phasePending   = "Pending"
	phaseSucceeded = "Succeeded"
	phaseFailed    = "Failed"
)

// succeededNote is every Succeeded template's status message: the honest limit.
const succeededNote = "local server: kept as a preset; no golden image was built or published"

var templateFormats = []string{"native", "overlaybd"}

type templateStatusJSON struct {
	Phase       string `json:"phase"`
	ManifestRef string `json:"manifestRef,omitempty"`
	Message     string `json:"message,omitempty"`
}

type readinessJSON struct {
	Probe         *string `json:"probe,omitempty"`
	WarmupSeconds *int64  `json:"warmupSeconds,omitempty"`
}

// templateJSON is the wire form of a template, and also what is kept on disk.
type templateJSON struct {
	TemplateID     string             `json:"templateId"`
	Image          string             `json:"image"`
	Publish        string             `json:"publish"`
	Format         string             `json:"format"`
	Status         templateStatusJSON `json:"status"`
	CreatedAt      string             `json:"createdAt"`
	UpdatedAt      string             `json:"updatedAt"`
	ResourceLimits map[string]string  `json:"resourceLimits,omitempty"`
	Entrypoint     []string           `json:"entrypoint,omitempty"`
	Env            map[string]string  `json:"env,omitempty"`
	Metadata       map[string]string  `json:"metadata,omitempty"`
	Readiness      *readinessJSON     `json:"readiness,omitempty"`
}

// templateStore holds the templates, in creation order, each also written to
// <dir>/<id>.json so that a server restarted on the same data dir keeps them.
type templateStore struct {
	dir   string
	mu    sync.Mutex
	items map[string]*templateJSON
	order []string // ids, oldest first
}

func loadTemplates(dir string) (*templateStore, error) {
	ts := &templateStore{dir: dir, items: map[string]*templateJSON{}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var loaded []*templateJSON
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var t templateJSON
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err != nil || json.Unmarshal(b, &t) != nil || t.TemplateID == "" {
			continue // a damaged file is left alone rather than stopping the server
		}
		loaded = append(loaded, &t)
	}
	slices.SortFunc(loaded, func(a, b *templateJSON) int { return strings.Compare(a.CreatedAt, b.CreatedAt) })
	for _, t := range loaded {
		ts.items[t.TemplateID] = t
		ts.order = append(ts.order, t.TemplateID)
	}
	return ts, nil
}

// pending lists templates whose check never finished (the server stopped).
func (ts *templateStore) pending() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var ids []string
	for _, id := range ts.order {
		if ts.items[id].Status.Phase == phasePending {
			ids = append(ids, id)
		}
	}
	return ids
}

func (ts *templateStore) save(t *templateJSON) error {
	return writeJSONAtomic(filepath.Join(ts.dir, t.TemplateID+".json"), t)
}

func (ts *templateStore) add(t *templateJSON) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := ts.save(t); err != nil {
		return err
	}
	ts.items[t.TemplateID] = t
	ts.order = append(ts.order, t.TemplateID)
	return nil
}

// get returns a copy of a template.
func (ts *templateStore) get(id string) (templateJSON, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.items[id]
	if !ok {
		return templateJSON{}, false
	}
	return *t, true
}

// list returns copies of the templates keep accepts, oldest first.
func (ts *templateStore) list(keep func(*templateJSON) bool) []templateJSON {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []templateJSON
	for _, id := range ts.order {
		if t := ts.items[id]; keep(t) {
			out = append(out, *t)
		}
	}
	return out
}

func (ts *templateStore) remove(id string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if _, ok := ts.items[id]; !ok {
		return false
	}
	delete(ts.items, id)
	for i, x := range ts.order {
		if x == id {
			ts.order = append(ts.order[:i], ts.order[i+1:]...)
			break
		}
	}
	os.Remove(filepath.Join(ts.dir, id+".json"))
	return true
}

// finish records the outcome of a template's check; a template deleted in
// the meantime stays deleted.
func (ts *templateStore) finish(id string, problem error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.items[id]
	if !ok {
		return
	}
	t.Status = templateStatusJSON{Phase: phaseSucceeded, Message: succeededNote}
	if problem != nil {
		t.Status = templateStatusJSON{Phase: phaseFailed, Message: problem.Error()}
	}
	t.UpdatedAt = formatTime(time.Now())
	ts.save(t)
}

func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	t, ok := parseTemplate(w, body)
	if !ok {
		return
	}
	now := formatTime(time.Now())
	t.TemplateID = "tpl_" + newUUID()
	t.Status = templateStatusJSON{Phase: phasePending}
	t.CreatedAt, t.UpdatedAt = now, now
	if err := s.templates.add(t); err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	view := *t
	id := t.TemplateID
	s.goBackground(func() { s.templates.finish(id, checkTemplate(view)) })
	s.log.event("template %s created (image %q)", id, view.Image)
	w.Header().Set("Location", "http://"+r.Host+"/v1/templates/"+id)
	writeJSON(w, http.StatusCreated, view)
}

// parseTemplate checks the shape of a CreateTemplateRequest: FastAPI-style
// 422s for wrong types, 400 for metadata labels. Content problems (a blank
// image, an entrypoint this host cannot run) are found by checkTemplate and
// make the template Failed, as a failed build would.
func parseTemplate(w http.ResponseWriter, body map[string]any) (*templateJSON, bool) {
	var v fields
	t := &templateJSON{
		Image:          v.requiredStr(body, "image"),
		Publish:        v.requiredStr(body, "publish"),
		ResourceLimits: v.strMap(body, "resourceLimits"),
		Entrypoint:     v.strList(body, "entrypoint", 0),
		Env:            v.strMap(body, "env"),
		Metadata:       v.strMap(body, "metadata"),
		Format:         v.oneOf(body, "format", templateFormats, "overlaybd"),
		Readiness:      v.readiness(body),
	}
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return nil, false
	}
	if err := checkLabels(t.Metadata); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidLabel, err.Error())
		return nil, false
	}
	if len(t.Entrypoint) == 0 {
		t.Entrypoint = nil
	}
	return t, true
}

// requiredStr reads a string field that must be present.
func (v *fields) requiredStr(body map[string]any, name string) string {
	if body[name] == nil {
		v.add(missing([]any{"body", name}, body))
		return ""
	}
	return v.str(body, name)
}

// oneOf reads an optional string field restricted to allowed values.
func (v *fields) oneOf(body map[string]any, name string, allowed []string, def string) string {
	x := body[name]
	if x == nil {
		return def
	}
	for _, a := range allowed {
		if x == a {
			return a
		}
	}
	want := "'" + strings.Join(allowed, "' or '") + "'"
	v.add(detail{Type: "literal_error", Loc: []any{"body", name}, Input: x,
		Msg: "Input should be " + want, Ctx: map[string]any{"expected": want}})
	return def
}

// readiness reads {probe?: string, warmupSeconds?: int >= 0}.
func (v *fields) readiness(body map[string]any) *readinessJSON {
	x := body["readiness"]
	if x == nil {
		return nil
	}
	m, ok := x.(map[string]any)
	if !ok {
		v.add(typeErr([]any{"body", "readiness"}, "model_attributes_type", "Input should be a valid dictionary or object to extract fields from", x))
		return nil
	}
	out := &readinessJSON{}
	if m["probe"] != nil {
		if p, ok := m["probe"].(string); ok {
			out.Probe = &p
		} else {
			v.add(typeErr([]any{"body", "readiness", "probe"}, "string_type", "Input should be a valid string", m["probe"]))
		}
	}
	if raw := m["warmupSeconds"]; raw != nil {
		loc := []any{"body", "readiness", "warmupSeconds"}
		switch n, ok := toInt(raw); {
		case !ok:
			v.add(typeErr(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", raw))
		case n < 0:
			v.add(detail{Type: "greater_than_equal", Loc: loc, Input: raw,
				Msg: "Input should be greater than or equal to 0", Ctx: map[string]any{"ge": 0}})
		default:
			out.WarmupSeconds = &n
		}
	}
	return out
}

// imageRef is the usual container image reference grammar: an optional
// registry host[:port], lowercase path components, a tag and/or a digest.
// Compiled on first use, not at start-up, which every command pays for.
var imageRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?/)?` +
		`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
		`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,})?$`)
})

// checkTemplate stands in for the golden-image build: it finds what would
// make sandboxes created from the template fail.
func checkTemplate(t templateJSON) error {
	switch {
	case strings.TrimSpace(t.Image) == "":
		return errors.New("the image must not be blank")
	case !imageRef().MatchString(t.Image):
		return fmt.Errorf("%q is not a valid image reference", t.Image)
	case strings.TrimSpace(t.Publish) == "":
		return errors.New("the publish target must not be blank")
	}
	if u, err := url.Parse(t.Publish); err != nil || u.Scheme != "s3" || u.Host == "" {
		return fmt.Errorf("publish target %q is not an S3 URL like s3://bucket/prefix", t.Publish)
	}
	if len(t.Entrypoint) > 0 {
		if _, err := exec.LookPath(t.Entrypoint[0]); err != nil {
			return fmt.Errorf("entrypoint program %q is not available on this host (images are not pulled; host programs are used)", t.Entrypoint[0])
		}
	}
	if t.Readiness != nil && t.Readiness.Probe != nil {
		return checkProbe(*t.Readiness.Probe)
	}
	return nil
}

// checkProbe accepts tcp://host:port and cmd://<command>.
func checkProbe(p string) error {
	if cmd, ok := strings.CutPrefix(p, "cmd://"); ok {
		if strings.TrimSpace(cmd) == "" {
			return errors.New("readiness probe cmd:// names no command")
		}
		return nil
	}
	if addr, ok := strings.CutPrefix(p, "tcp://"); ok {
		host, port, err := net.SplitHostPort(addr)
		if err == nil && host != "" {
			if n, err := strconv.Atoi(port); err == nil && n >= 1 && n <= 65535 {
				return nil
			}
		}
		return fmt.Errorf("readiness probe %q needs tcp://host:port with a port from 1 to 65535", p)
	}
	return fmt.Errorf("readiness probe %q must start with tcp:// or cmd://", p)
}

func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request) {
	q, ok := parseListQuery(w, r.URL.Query())
	if !ok {
		return
	}
	match := s.templates.list(func(t *templateJSON) bool { return labelsMatch(t.Metadata, q.metadata) })
	writeJSON(w, http.StatusOK, page(match, q))
}

func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, ok := s.templates.get(id)
	if !ok {
		writeError(w, http.StatusNotFound, codeTemplateNotFound, "Template "+id+" not found.")
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// deleteTemplate forgets a template; sandboxes created from it keep running.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.templates.remove(id) {
		writeError(w, http.StatusNotFound, codeTemplateNotFound, "Template "+id+" not found.")
		return
	}
	s.log.event("template %s deleted", id)
	w.WriteHeader(http.StatusNoContent)
}

// applyTemplate fills a create request from its template: the template fixes
// the workload (image, entrypoint, env); the request may add metadata, which
// wins over the template's on the same key.
func (s *Server) applyTemplate(req *createRequest) (int, string, error) {
	t, ok := s.templates.get(req.templateID)
	if !ok {
		return http.StatusNotFound, codeTemplateNotFound, fmt.Errorf("Template %s not found.", req.templateID)
	}
	if t.Status.Phase != phaseSucceeded {
		msg := fmt.Sprintf("Template %s is %s; only a Succeeded template can back a sandbox.", t.TemplateID, t.Status.Phase)
		if t.Status.Phase == phaseFailed {
			msg += " " + t.Status.Message
		}
		return http.StatusNotFound, codeTemplateNotFound, errors.New(msg)
	}
	req.imageURI, req.entrypoint, req.env = t.Image, t.Entrypoint, t.Env
	metadata := map[string]string{}
	for k, v := range t.Metadata {
		metadata[k] = v
	}
	for k, v := range req.metadata {
		metadata[k] = v
	}
	req.metadata = metadata
	return 0, "", nil
}

// templateWorkload names the fields a request with templateId must not set:
// the template decides them.
var templateWorkload = []string{"entrypoint", "env", "resourceLimits", "resourceRequests", "volumes", "platform"}

// checkTemplateMode rejects workload fields next to templateId.
func checkTemplateMode(body map[string]any) string {
	var bad []string
	for _, k := range templateWorkload {
		if body[k] != nil {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "A template fixes the workload of the sandbox; templateId cannot be combined with " + strings.Join(bad, ", ") + "."
}

// writeJSONAtomic replaces path with v as JSON: a crash leaves the old file
// or the new one, never half of one.
func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
