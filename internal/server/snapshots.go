package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/osb-dev/osb/internal/server/image"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// Snapshots. A snapshot is a copy of a sandbox's own files (the areas of
// sandbox.Areas: /workspace, /tmp, /root, /home) taken while it runs, kept in
// <datadir>/snapshots/<id>/fs with modes, times and symlinks as they were,
// next to snapshot.json (its record and the source's entrypoint). Processes
// and memory are not captured. A create with snapshotId copies the files
// into the new sandbox before its entrypoint starts.
//
// A snapshot of an image sandbox also holds its writable root, as a Docker
// commit does: <id>/rootfs/upper, the overlay's upper layer (whiteouts and
// opaque directories included), or <id>/rootfs/tree, the whole root where
// the layers were copied. A restore runs the same image with that layer
// as its own upper layer to start from.

const (
	codeSnapshotSourceState = "SNAPSHOT::INVALID_SOURCE_STATE" // also: the sandbox is being snapshotted already
	codeSnapshotState       = "SNAPSHOT::INVALID_STATE"        // delete while it is created or restored
	codeSnapshotNotReady    = "SNAPSHOT::NOT_READY"
)

// Snapshot states.
const (
	snapCreating = "Creating"
	snapReady    = "Ready"
	snapFailed   = "Failed"
)

// errSnapshotNotReady matches what Restore returns for a snapshot that is
// still being created, or failed.
var errSnapshotNotReady = errors.New("snapshot not ready")

type notReadyError struct{ msg string }

func (e *notReadyError) Error() string        { return e.msg }
func (e *notReadyError) Is(target error) bool { return target == errSnapshotNotReady }

// refusal is a request the stores turn down, with the HTTP answer it maps to.
type refusal struct {
	status int
	code   string
	msg    string
}

func (e *refusal) Error() string { return e.msg }

// writeRefusal answers a refusal as such, any other error as a 500.
func writeRefusal(w http.ResponseWriter, err error) {
	var ref *refusal
	if errors.As(err, &ref) {
		writeError(w, ref.status, ref.code, ref.msg)
		return
	}
	writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
}

type snapshotJSON struct {
	ID        string     `json:"id"`
	SandboxID string     `json:"sandboxId"`
	Name      string     `json:"name,omitempty"`
	Status    statusJSON `json:"status"`
	CreatedAt string     `json:"createdAt"`
}

// snapshotMeta is what snapshot.json holds.
type snapshotMeta struct {
	snapshotJSON
	Entrypoint []string `json:"entrypoint"`
	// Image is the image the source sandbox ran ("" for host programs): a
	// restore runs it again, with the snapshot's files.
	Image string `json:"image,omitempty"`
	// Root names the copy of the source's writable root in rootfs/:
	// "upper" (its changes over the image), "tree" (a whole root), or "".
	Root string `json:"root,omitempty"`
}

type snapshotEntry struct {
	meta      snapshotMeta
	restoring int // creates copying from it right now; it cannot be deleted meanwhile
}

type snapshotStore struct {
	dir   string
	mu    sync.Mutex
	items map[string]*snapshotEntry
	order []string // ids, oldest first
}

func (ss *snapshotStore) metaPath(id string) string {
	return filepath.Join(ss.dir, id, "snapshot.json")
}
func (ss *snapshotStore) fsDir(id string) string { return filepath.Join(ss.dir, id, "fs") }

func (ss *snapshotStore) rootDir(id string) string { return filepath.Join(ss.dir, id, "rootfs") }

// loadSnapshots reads the snapshots a previous run left in dir. One caught
// mid-capture by a stop is Failed, its partial files removed.
func loadSnapshots(dir string) (*snapshotStore, error) {
	ss := &snapshotStore{dir: dir, items: map[string]*snapshotEntry{}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var metas []snapshotMeta
	for _, e := range entries {
		var m snapshotMeta
		if b, err := os.ReadFile(ss.metaPath(e.Name())); err != nil || json.Unmarshal(b, &m) != nil || m.ID != e.Name() {
			continue // not a snapshot, or damaged: left alone
		}
		if m.Status.State == snapCreating {
			sandbox.RemoveTree(ss.fsDir(m.ID))
			m.Status = statusJSON{State: snapFailed, Reason: "snapshot_recovery_failed",
				Message: "the server stopped before the capture finished", LastTransitionAt: formatTime(time.Now())}
			writeJSONAtomic(ss.metaPath(m.ID), m)
		}
		metas = append(metas, m)
	}
	slices.SortFunc(metas, func(a, b snapshotMeta) int { return strings.Compare(a.CreatedAt, b.CreatedAt) })
	for _, m := range metas {
		ss.items[m.ID] = &snapshotEntry{meta: m}
		ss.order = append(ss.order, m.ID)
	}
	return ss, nil
}

// begin registers a new Creating snapshot; a sandbox has at most one at a time.
func (ss *snapshotStore) begin(m snapshotMeta) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, e := range ss.items {
		if e.meta.SandboxID == m.SandboxID && e.meta.Status.State == snapCreating {
			return &refusal{http.StatusConflict, codeSnapshotSourceState,
				fmt.Sprintf("Snapshot %s of sandbox %s is still being created.", e.meta.ID, m.SandboxID)}
		}
	}
	if err := os.MkdirAll(filepath.Join(ss.dir, m.ID), 0o700); err != nil {
		return err
	}
	if err := writeJSONAtomic(ss.metaPath(m.ID), m); err != nil {
		return err
	}
	ss.items[m.ID] = &snapshotEntry{meta: m}
	ss.order = append(ss.order, m.ID)
	return nil
}

// finish records the end of a capture: Ready, or Failed with problem.
func (ss *snapshotStore) finish(id string, problem error, skipped int) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	e := ss.items[id]
	if e == nil {
		return
	}
	// Reasons as the real server words them; its message names Docker.
	st := statusJSON{State: snapReady, Reason: "snapshot_runtime_ready", Message: "Snapshot created successfully.",
		LastTransitionAt: formatTime(time.Now())}
	if skipped > 0 {
		st.Message = fmt.Sprintf("%d entries were left out: special files (sockets, FIFOs, devices), or files replaced during the copy", skipped)
	}
	if problem != nil {
		st = statusJSON{State: snapFailed, Reason: "snapshot_runtime_failed", Message: problem.Error(),
			LastTransitionAt: st.LastTransitionAt}
		sandbox.RemoveTree(ss.fsDir(id))
		sandbox.RemoveTree(ss.rootDir(id))
		e.meta.Root = ""
	}
	e.meta.Status = st
	writeJSONAtomic(ss.metaPath(id), e.meta)
}

// setRoot records that a capture copied the source's writable root (the
// record is written when the capture finishes).
func (ss *snapshotStore) setRoot(id, root string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if e := ss.items[id]; e != nil {
		e.meta.Root = root
	}
}

func (ss *snapshotStore) get(id string) (snapshotMeta, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	e := ss.items[id]
	if e == nil {
		return snapshotMeta{}, false
	}
	return e.meta, true
}

// list returns the snapshots keep accepts, oldest first.
func (ss *snapshotStore) list(keep func(*snapshotMeta) bool) []snapshotJSON {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []snapshotJSON
	for _, id := range ss.order {
		if m := &ss.items[id].meta; keep(m) {
			out = append(out, m.snapshotJSON)
		}
	}
	return out
}

// remove deletes a snapshot that is neither being created nor restored.
func (ss *snapshotStore) remove(id string) error {
	ss.mu.Lock()
	e := ss.items[id]
	switch {
	case e == nil:
		ss.mu.Unlock()
		return &refusal{http.StatusNotFound, codeSnapshotNotFound, "Snapshot " + id + " not found"} // the real server's words
	case e.meta.Status.State == snapCreating:
		ss.mu.Unlock()
		return &refusal{http.StatusConflict, codeSnapshotState,
			"Snapshot " + id + " is still being created; delete it once it is Ready or Failed."}
	case e.restoring > 0:
		ss.mu.Unlock()
		return &refusal{http.StatusConflict, codeSnapshotState,
			"Snapshot " + id + " is being restored into a new sandbox; try again in a moment."}
	}
	delete(ss.items, id)
	for i, x := range ss.order {
		if x == id {
			ss.order = append(ss.order[:i], ss.order[i+1:]...)
			break
		}
	}
	ss.mu.Unlock()
	return sandbox.RemoveTree(filepath.Join(ss.dir, id))
}

// Restore implements SnapshotStore: it copies the snapshot's files into
// fsDir, the new sandbox's empty file tree.
func (ss *snapshotStore) Restore(id, fsDir string) ([]string, error) {
	return ss.restoreInto(id, fsDir, "")
}

// restoreInto is Restore that also copies the source's writable root, if
// the snapshot has one, to upperDir (the new image sandbox's upper layer;
// "": none).
func (ss *snapshotStore) restoreInto(id, fsDir, upperDir string) ([]string, error) {
	ss.mu.Lock()
	e := ss.items[id]
	switch {
	case e == nil:
		ss.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrSnapshotNotFound, id)
	case e.meta.Status.State != snapReady:
		state := e.meta.Status.State
		ss.mu.Unlock()
		return nil, &notReadyError{fmt.Sprintf("Snapshot %s is %s; only a Ready snapshot can be restored.", id, state)}
	}
	e.restoring++
	entrypoint, root := e.meta.Entrypoint, e.meta.Root
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		e.restoring--
		ss.mu.Unlock()
	}()
	src, err := os.OpenRoot(ss.fsDir(id))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", id, err)
	}
	defer src.Close()
	if _, err := copyAreas(src, fsDir); err != nil {
		return nil, fmt.Errorf("restoring snapshot %s: %w", id, err)
	}
	if root != "" && upperDir != "" {
		if err := restoreRoot(ss.rootDir(id), root, upperDir); err != nil {
			return nil, fmt.Errorf("restoring snapshot %s: %w", id, err)
		}
	}
	return entrypoint, nil
}

// restoreRoot copies a snapshot's writable root (dir/name) to upperDir.
// A whole root ("tree") goes over the image with each of its top
// directories opaque, so that what the source deleted stays deleted.
func restoreRoot(dir, name, upperDir string) error {
	src, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(upperDir), 0o755); err != nil {
		return err
	}
	dst, err := os.OpenRoot(filepath.Dir(upperDir))
	if err != nil {
		return err
	}
	defer dst.Close()
	var st copyStats
	if err := copyTree(src, dst, name, 0, &st); err != nil {
		return err
	}
	if name == "upper" {
		return nil
	}
	if err := dst.Rename(name, filepath.Base(upperDir)); err != nil {
		return err
	}
	entries, err := os.ReadDir(upperDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := image.MarkOpaque(dst, path.Join(filepath.Base(upperDir), e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// openStores loads the templates and snapshots kept in the data dir, and
// makes the snapshot store the restore hook unless Options named another.
func (s *Server) openStores() error {
	var err error
	if s.templates, err = loadTemplates(filepath.Join(s.dataDir, "templates")); err != nil {
		return err
	}
	if s.snapshots, err = loadSnapshots(filepath.Join(s.dataDir, "snapshots")); err != nil {
		return err
	}
	if s.opts.Snapshots == nil {
		s.opts.Snapshots = s.snapshots
	}
	for _, id := range s.templates.pending() {
		t, _ := s.templates.get(id)
		s.goBackground(func() { s.templates.finish(id, checkTemplate(t)) })
	}
	return nil
}

// goBackground runs f in its own goroutine unless the server is closing;
// Close waits for every such f before it removes files.
func (s *Server) goBackground(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.background.Go(f)
	return true
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) {
	name, ok := readSnapshotName(w, r)
	if !ok {
		return
	}
	sid := r.PathValue("id")
	s.mu.Lock()
	rec := s.records[sid]
	var state string
	if rec != nil {
		state = rec.state
	}
	s.mu.Unlock()
	switch {
	case rec == nil:
		writeError(w, http.StatusNotFound, codeNotFound, "Sandbox "+sid+" not found.")
		return
	case state != stateRunning:
		writeError(w, http.StatusConflict, codeSnapshotSourceState,
			fmt.Sprintf("Sandbox %s is %s; a snapshot needs it Running.", sid, state))
		return
	}
	now := formatTime(time.Now())
	m := snapshotMeta{snapshotJSON: snapshotJSON{ID: "snap_" + randomHex(12), SandboxID: sid, Name: name, CreatedAt: now,
		Status: statusJSON{State: snapCreating, Reason: "snapshot_accepted",
			Message: "Snapshot creation accepted.", LastTransitionAt: now}}, Entrypoint: rec.entrypoint,
		Image: rec.ranImage}
	if err := s.snapshots.begin(m); err != nil {
		writeRefusal(w, err)
		return
	}
	s.noteEvent(sid, "SnapshotCreating", "snapshot "+m.ID)
	if !s.goBackground(func() { s.capture(rec.sb, m.ID, sid) }) {
		s.snapshots.finish(m.ID, errors.New("the server shut down before the capture started"), 0)
		writeError(w, http.StatusServiceUnavailable, codeShuttingDown, "The server is shutting down.")
		return
	}
	s.log.event("snapshot %s of sandbox %s accepted", m.ID, sid)
	w.Header().Set("Location", "http://"+r.Host+"/v1/snapshots/"+m.ID)
	writeJSON(w, http.StatusAccepted, m.snapshotJSON)
}

// readSnapshotName reads the optional {"name": "..."} body (no other field,
// name at least one character); no body at all is an unnamed snapshot.
func readSnapshotName(w http.ResponseWriter, r *http.Request) (string, bool) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidParameter, "cannot read request body: "+err.Error())
		return "", false
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return "", true
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	body, ok := readObject(w, r)
	if !ok {
		return "", false
	}
	var v fields
	for k, val := range body {
		if k != "name" {
			v.add(typeErr([]any{"body", k}, "extra_forbidden", "Extra inputs are not permitted", val))
		}
	}
	name := v.str(body, "name")
	if s, isStr := body["name"].(string); isStr && s == "" {
		v.add(detail{Type: "string_too_short", Loc: []any{"body", "name"}, Input: s,
			Msg: "String should have at least 1 character", Ctx: map[string]any{"min_length": 1}})
	}
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return "", false
	}
	return name, true
}

// capture copies the sandbox's files into the snapshot, without pausing the
// sandbox: a file written during the copy may be caught half-written.
func (s *Server) capture(sb *sandbox.Sandbox, id, sandboxID string) {
	st, err := copyAreas(sb.FS(), s.snapshots.fsDir(id))
	if err == nil {
		err = s.captureRoot(sb, id, &st)
	}
	s.snapshots.finish(id, err, st.skipped)
	if err != nil {
		s.noteEvent(sandboxID, "SnapshotFailed", "snapshot "+id+": "+err.Error())
		s.log.event("snapshot %s of sandbox %s failed: %v", id, sandboxID, err)
		return
	}
	s.noteEvent(sandboxID, "SnapshotReady", "snapshot "+id)
	s.log.event("snapshot %s of sandbox %s ready", id, sandboxID)
}

// captureRoot copies an image sandbox's writable root into the snapshot
// and says so in its record.
func (s *Server) captureRoot(sb *sandbox.Sandbox, id string, st *copyStats) error {
	dir, _, ok := sb.WritableRoot()
	if !ok {
		return nil
	}
	src, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(s.snapshots.rootDir(id), 0o700); err != nil {
		return err
	}
	dst, err := os.OpenRoot(s.snapshots.rootDir(id))
	if err != nil {
		return err
	}
	defer dst.Close()
	if err := copyTree(src, dst, filepath.Base(dir), 0, st); err != nil {
		return fmt.Errorf("the sandbox's root: %w", err)
	}
	s.snapshots.setRoot(id, filepath.Base(dir))
	return nil
}

func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) {
	values := r.URL.Query()
	q, ok := parseListQuery(w, values)
	if !ok {
		return
	}
	sandboxID, name := values.Get("sandboxId"), values.Get("name")
	match := s.snapshots.list(func(m *snapshotMeta) bool {
		return (sandboxID == "" || m.SandboxID == sandboxID) &&
			(!values.Has("name") || m.Name == name) &&
			q.stateMatches(m.Status.State)
	})
	writeJSON(w, http.StatusOK, page(match, q))
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, ok := s.snapshots.get(id)
	if !ok {
		writeError(w, http.StatusNotFound, codeSnapshotNotFound, "Snapshot "+id+" not found") // the real server's words
		return
	}
	writeJSON(w, http.StatusOK, m.snapshotJSON)
}

func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.snapshots.remove(id); err != nil {
		writeRefusal(w, err)
		return
	}
	s.log.event("snapshot %s deleted", id)
	w.WriteHeader(http.StatusNoContent)
}

// copyStats counts what a copy left out.
type copyStats struct{ skipped int }

// maxCopyDepth bounds directory nesting, so a symlink loop swapped in
// during a copy cannot make it recurse forever.
const maxCopyDepth = 256

// copyAreas copies each sandbox area found in src into the directory dstDir
// (created if needed). src is an os.Root, so nothing outside it is ever read,
// whatever symlinks the sandbox made; symlinks are copied as symlinks.
func copyAreas(src *os.Root, dstDir string) (copyStats, error) {
	var st copyStats
	if err := os.MkdirAll(dstDir, 0o700); err != nil {
		return st, err
	}
	dst, err := os.OpenRoot(dstDir)
	if err != nil {
		return st, err
	}
	defer dst.Close()
	for _, area := range sandbox.Areas {
		fi, err := src.Lstat(area)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return st, err
		case !fi.IsDir():
			// An unisolated sandbox replaced the area itself (by a symlink, say).
			st.skipped++
			continue
		}
		if err := copyTree(src, dst, area, 0, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

func copyTree(src, dst *os.Root, name string, depth int, st *copyStats) error {
	if depth > maxCopyDepth {
		return fmt.Errorf("%s: directories nested deeper than %d levels", name, maxCopyDepth)
	}
	fi, err := src.Lstat(name)
	if err != nil {
		return err
	}
	switch mode := fi.Mode(); {
	case mode&fs.ModeSymlink != 0:
		target, err := src.Readlink(name)
		if err != nil {
			return err
		}
		if err := dst.Symlink(target, name); err != nil {
			return err
		}
		keepOwner(dst, name, fi)
		return nil
	case mode.IsDir(), mode.IsRegular():
		return copyOpened(src, dst, name, fi, depth, st)
	case image.IsWhiteout(fi):
		// A file deleted from an image sandbox's root.
		return image.Whiteout(dst, name)
	default:
		st.skipped++
		return nil
	}
}

// copyOpened copies a directory or regular file. It checks that what it
// opened is what Lstat saw: an entry swapped for something else in between
// is left out. O_NONBLOCK keeps a FIFO swapped in from blocking the open.
func copyOpened(src, dst *os.Root, name string, fi fs.FileInfo, depth int, st *copyStats) error {
	f, err := src.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		st.skipped++
		return nil
	}
	if fi.IsDir() {
		names, err := f.Readdirnames(-1)
		if err != nil {
			return err
		}
		if err := dst.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if image.OpenedOpaque(f) {
			// An image sandbox's directory that hides the image's.
			if err := image.MarkOpaque(dst, name); err != nil {
				return err
			}
		}
		slices.Sort(names)
		for _, n := range names {
			if err := copyTree(src, dst, path.Join(name, n), depth+1, st); err != nil {
				return err
			}
		}
	} else if err := copyContent(f, dst, name); err != nil {
		return err
	}
	return finishEntry(dst, name, fi)
}

func copyContent(f *os.File, dst *os.Root, name string) error {
	out, err := dst.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, f)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// finishEntry gives a copied file or directory the owner (when running as
// root), mode bits and modification time of the original. Directories are
// finished after their contents, so a read-only one could still be filled.
func finishEntry(dst *os.Root, name string, fi fs.FileInfo) error {
	keepOwner(dst, name, fi)
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if err := dst.Chmod(name, mode); err != nil {
		return err
	}
	return dst.Chtimes(name, fi.ModTime(), fi.ModTime())
}

// keepOwner copies the owner when the server may (as root); otherwise the
// copy belongs to the server's user, as every sandbox file does.
func keepOwner(dst *os.Root, name string, fi fs.FileInfo) {
	if uid, gid, ok := ownerIDs(fi); ok && os.Geteuid() == 0 {
		dst.Lchown(name, uid, gid)
	}
}
