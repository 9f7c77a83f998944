package execd

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// fileAPI serves /files/* and /directories*. Every name goes through
// sandbox.ResolvePath and every operation through the sandbox's os.Root, so
// neither "..", absolute paths nor symlinks can reach a file outside it.
type fileAPI struct {
	sb *sandbox.Sandbox
}

func (h *handler) filesRoutes(mux *http.ServeMux) {
	fa := &fileAPI{sb: h.sb}
	mux.HandleFunc("POST /files/upload", fa.upload)
	mux.HandleFunc("GET /files/download", fa.download)
	mux.HandleFunc("GET /files/info", fa.info)
	mux.HandleFunc("GET /files/search", fa.search)
	mux.HandleFunc("DELETE /files", fa.removeFiles)
	mux.HandleFunc("POST /files/mv", fa.move)
	mux.HandleFunc("POST /files/replace", fa.replace)
	mux.HandleFunc("POST /files/permissions", fa.chmod)
	mux.HandleFunc("GET /directories/list", fa.list)
	mux.HandleFunc("POST /directories", fa.mkdir)
	mux.HandleFunc("DELETE /directories", fa.removeDirs)
}

// fileInfo is execd's FileInfo, fields in the order it sends them.
type fileInfo struct {
	Path       string    `json:"path"`
	Type       string    `json:"type"`
	Size       int64     `json:"size"`
	ModifiedAt time.Time `json:"modified_at"`
	CreatedAt  time.Time `json:"created_at"`
	Owner      string    `json:"owner"`
	Group      string    `json:"group"`
	Mode       int       `json:"mode"`
}

// permission is execd's Permission: mode in octal digits read as decimal
// (0: leave alone), owner and group by name ("": leave alone).
type permission struct {
	Owner string `json:"owner"`
	Group string `json:"group"`
	Mode  int    `json:"mode"`
}

// fileRef is one request path resolved: name is for the os.Root, abs is the
// clean path as the sandbox sees it, for answers and messages.
type fileRef struct {
	name, abs string
}

// resolve maps a request path to the sandbox filesystem. "~" is the
// sandbox's home, /root; relative paths start at /workspace.
func (fa *fileAPI) resolve(p string) (fileRef, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = "/root" + p[1:]
	}
	name, err := fa.sb.ResolvePath(p)
	if err != nil {
		return fileRef{}, err
	}
	return fileRef{name: name, abs: absPath(name)}, nil
}

// resolveDir is resolve for listing and searching, where "/" also works:
// it stands for the directory holding the sandbox's areas.
func (fa *fileAPI) resolveDir(p string) (fileRef, error) {
	if path.Clean(p) == "/" {
		return fileRef{name: ".", abs: "/"}, nil
	}
	return fa.resolve(p)
}

// absPath is the sandbox path of a name in the os.Root.
func absPath(name string) string { return path.Join("/", name) }

func (fa *fileAPI) root() *os.Root { return fa.sb.FS() }

// isAreaRoot reports whether ref is one of the sandbox's top directories,
// which stand for mount points and cannot be removed or moved.
func isAreaRoot(ref fileRef) bool { return slices.Contains(sandbox.Areas, ref.name) }

// --- answers ---------------------------------------------------------------

func fileBadRequest(w http.ResponseWriter, code, msg string) {
	writeError(w, http.StatusBadRequest, code, msg)
}

func fileNotFound(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusNotFound, "FILE_NOT_FOUND", msg)
}

func fileRuntimeError(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusInternalServerError, "RUNTIME_ERROR", msg)
}

func fileBadBody(w http.ResponseWriter, err error) {
	fileBadRequest(w, "INVALID_REQUEST_BODY", "error parsing request, MAYBE invalid body format. "+err.Error())
}

// refuseOutside answers 400 when err says the path leaves the sandbox
// filesystem (outside its areas, or through a symlink), and reports whether
// it did. Real execd has no such case: inside a container every path is the
// container's. Here only the sandbox's own areas are its files.
func refuseOutside(w http.ResponseWriter, err error, p string) bool {
	if errors.Is(err, sandbox.ErrOutsideFS) {
		fileBadRequest(w, "INVALID_FILE", err.Error())
		return true
	}
	if escapesRoot(err) {
		fileBadRequest(w, "INVALID_FILE", outsideMessage(p))
		return true
	}
	return false
}

// outsideMessage is the answer to a path a symlink leads out of the
// sandbox filesystem.
func outsideMessage(abs string) string {
	return abs + ": a symbolic link on this path leads outside the sandbox filesystem"
}

// refFor is resolve for a handler: a request path that does not resolve
// (outside the sandbox filesystem, or not a valid path at all) is answered
// here, and ok is false.
func (fa *fileAPI) refFor(w http.ResponseWriter, p string) (ref fileRef, ok bool) {
	ref, err := fa.resolve(p)
	return ref, resolved(w, err, p)
}

// dirRefFor is refFor with resolveDir.
func (fa *fileAPI) dirRefFor(w http.ResponseWriter, p string) (ref fileRef, ok bool) {
	ref, err := fa.resolveDir(p)
	return ref, resolved(w, err, p)
}

func resolved(w http.ResponseWriter, err error, p string) bool {
	if err == nil {
		return true
	}
	if !refuseOutside(w, err, p) {
		fileBadRequest(w, "INVALID_FILE", err.Error())
	}
	return false
}

// changeFailed answers a failed change to ref: 400 when it would leave the
// sandbox filesystem or the path cannot name what the request needs
// (pathMistake), else 500 with msg followed by the system error.
func changeFailed(w http.ResponseWriter, err error, ref fileRef, msg string) {
	switch {
	case refuseOutside(w, err, ref.abs):
	case pathMistake(err):
		fileBadRequest(w, "INVALID_FILE", msg+cause(err))
	default:
		fileRuntimeError(w, msg+cause(err))
	}
}

// pathMistake reports a failure that comes from the path the client gave,
// not from the server: a directory where a file is needed or the other way
// round (EEXIST: a file where a parent directory is to be made), a name too
// long, a loop of links. The real execd answers these with 500 (a directory
// download even with a broken 200); here they are 400.
func pathMistake(err error) bool {
	for _, e := range []error{syscall.EISDIR, syscall.ENOTDIR, syscall.EEXIST, syscall.ENAMETOOLONG, syscall.ELOOP} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// escapesRoot recognises os.Root's refusal to leave its directory; the
// error value itself is not exported.
func escapesRoot(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// cause is the system error behind a filesystem error, without the
// root-relative name os.Root puts in its messages.
func cause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

func decodeFileBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20)).Decode(v); err != nil {
		fileBadBody(w, err)
		return false
	}
	return true
}

// requirePath returns the path query parameter, or answers 400
// MISSING_QUERY when it is absent or empty.
func requirePath(w http.ResponseWriter, r *http.Request) (string, bool) {
	q := r.URL.Query()
	if q.Get("path") == "" {
		fileBadRequest(w, "MISSING_QUERY", "missing query parameter 'path'")
		return "", false
	}
	return q.Get("path"), true
}

// --- FileInfo --------------------------------------------------------------

// describe builds execd's FileInfo from an lstat: symlinks are reported as
// themselves, mode as octal digits (special bits left out).
func describe(abs string, fi os.FileInfo) fileInfo {
	info := fileInfo{
		Path:       abs,
		Type:       entryType(fi.Mode()),
		Size:       fi.Size(),
		ModifiedAt: fi.ModTime().UTC(),
		CreatedAt:  fi.ModTime().UTC(),
		Mode:       modeDigits(fi.Mode()),
	}
	if uid, gid, changed, ok := owner(fi); ok {
		info.CreatedAt = changed.UTC()
		info.Owner = userName(uid)
		info.Group = groupName(gid)
	}
	return info
}

func entryType(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

func modeDigits(m os.FileMode) int {
	n, _ := strconv.Atoi(strconv.FormatUint(uint64(m.Perm()), 8))
	return n
}

// parseModeDigits reads execd's mode: decimal digits that are the octal
// permission. Like execd, setuid, setgid and sticky bits are dropped.
func parseModeDigits(mode int) (os.FileMode, error) {
	n, err := strconv.ParseUint(strconv.Itoa(mode), 8, 32)
	if err != nil {
		return 0, err
	}
	return os.FileMode(n) & os.ModePerm, nil
}

var (
	userNames  sync.Map // uint32 → string
	groupNames sync.Map
)

// userName looks up a uid once per process; unknown ids stay numeric.
func userName(uid uint32) string {
	if v, ok := userNames.Load(uid); ok {
		return v.(string)
	}
	name := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	userNames.Store(uid, name)
	return name
}

func groupName(gid uint32) string {
	if v, ok := groupNames.Load(gid); ok {
		return v.(string)
	}
	name := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(name); err == nil {
		name = g.Name
	}
	groupNames.Store(gid, name)
	return name
}

// perm is a permission read and looked up, ready to apply.
type perm struct {
	setMode  bool // mode 0 leaves the mode alone
	mode     os.FileMode
	uid, gid int // -1: unchanged
}

// checkPermission reads a permission of a request. Mode digits that are not
// octal and unknown owners or groups are the client's mistake; they are
// found here, before anything changes (execd finds them part way through
// and answers 500).
func checkPermission(p permission) (perm, error) {
	out := perm{setMode: p.Mode != 0, uid: -1, gid: -1}
	var err error
	if out.setMode {
		if out.mode, err = parseModeDigits(p.Mode); err != nil {
			return out, fmt.Errorf("invalid mode %d: not octal digits", p.Mode)
		}
	}
	if p.Owner != "" {
		u, err := user.Lookup(p.Owner)
		if err != nil {
			return out, fmt.Errorf("failed to lookup user %s: %w", p.Owner, err)
		}
		out.uid, _ = strconv.Atoi(u.Uid)
	}
	if p.Group != "" {
		g, err := user.LookupGroup(p.Group)
		if err != nil {
			return out, fmt.Errorf("failed to lookup group %s: %w", p.Group, err)
		}
		out.gid, _ = strconv.Atoi(g.Gid)
	}
	return out, nil
}

// checkPermissions is checkPermission for each entry of a request; a bad
// one is answered here (400), and ok is false.
func checkPermissions(w http.ResponseWriter, req map[string]permission) (map[string]perm, bool) {
	out := make(map[string]perm, len(req))
	for _, p := range slices.Sorted(maps.Keys(req)) {
		pm, err := checkPermission(req[p])
		if err != nil {
			fileBadRequest(w, "INVALID_REQUEST_BODY", "invalid permission for "+p+": "+err.Error())
			return nil, false
		}
		out[p] = pm
	}
	return out, true
}

// applyPermission sets the mode and the ownership p names.
func (fa *fileAPI) applyPermission(ref fileRef, p perm) error {
	if p.setMode {
		if err := fa.root().Chmod(ref.name, p.mode); err != nil {
			return fmt.Errorf("chmod %s: %s", ref.abs, cause(err))
		}
	}
	if p.uid < 0 && p.gid < 0 {
		return nil
	}
	if err := fa.root().Chown(ref.name, p.uid, p.gid); err != nil {
		return fmt.Errorf("chown %s: %s", ref.abs, cause(err))
	}
	return nil
}

// --- upload ----------------------------------------------------------------

type uploadMeta struct {
	Path  string `json:"path"`
	Owner string `json:"owner"`
	Group string `json:"group"`
	Mode  int    `json:"mode"`
	perm  perm   // the above, checked
}

// httpError is an answer decided deep inside a handler.
type httpError struct {
	status        int
	code, message string
}

func (e *httpError) Error() string { return e.message }

func (e *httpError) write(w http.ResponseWriter) { writeError(w, e.status, e.code, e.message) }

// upload writes each file part to the path of its metadata part, the Nth
// metadata going with the Nth file. Parts are streamed to disk as they
// arrive; a file part that comes before its metadata is spooled to the
// sandbox's private directory (outside its filesystem) until it can be
// placed. Like execd, only parts with a filename are seen at all.
func (fa *fileAPI) upload(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		fileBadRequest(w, "INVALID_FILE", "multipart form is empty")
		return
	}
	u := &uploadState{fa: fa}
	defer u.cleanup()
	if err := u.readParts(mr); err != nil {
		var he *httpError
		if errors.As(err, &he) {
			he.write(w)
			return
		}
		fileBadRequest(w, "INVALID_FILE", "error reading multipart form: "+err.Error())
		return
	}
	switch {
	case u.metas == 0 && u.files == 0:
		fileBadRequest(w, "INVALID_FILE", "multipart form is empty")
	case u.metas == 0:
		fileBadRequest(w, "INVALID_FILE_METADATA", "metadata file is missing")
	case u.files == 0:
		fileBadRequest(w, "INVALID_FILE_CONTENT", "file is missing")
	case u.metas != u.files:
		fileBadRequest(w, "INVALID_FILE", fmt.Sprintf("metadata and file count mismatch: %d vs %d", u.metas, u.files))
	}
}

type uploadState struct {
	fa           *fileAPI
	metas, files int
	waitingMeta  []uploadMeta // metadata whose file part has not come yet
	spooled      []*os.File   // file parts whose metadata has not come yet
}

func (u *uploadState) readParts(mr *multipart.Reader) error {
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if part.FileName() == "" {
			continue // invisible to execd, as a plain form field
		}
		switch part.FormName() {
		case "metadata":
			err = u.metadata(part)
		case "file":
			err = u.file(part)
		}
		if err != nil {
			return err
		}
	}
}

func (u *uploadState) metadata(part io.Reader) error {
	u.metas++
	var m uploadMeta
	if err := json.NewDecoder(io.LimitReader(part, 1<<20)).Decode(&m); err != nil {
		return &httpError{http.StatusBadRequest, "INVALID_FILE_METADATA", "invalid metadata format. " + err.Error()}
	}
	if m.Path == "" {
		return &httpError{http.StatusBadRequest, "INVALID_FILE_METADATA", "metadata path is empty"}
	}
	var err error
	if m.perm, err = checkPermission(permission{Owner: m.Owner, Group: m.Group, Mode: m.Mode}); err != nil {
		// Before the file is written; execd writes it, then answers 500.
		return &httpError{http.StatusBadRequest, "INVALID_FILE_METADATA", "invalid metadata: " + err.Error()}
	}
	if len(u.spooled) == 0 {
		u.waitingMeta = append(u.waitingMeta, m)
		return nil
	}
	f := u.spooled[0]
	u.spooled = u.spooled[1:]
	defer discardSpool(f)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return u.fa.store(m, f)
}

func (u *uploadState) file(part io.Reader) error {
	u.files++
	if len(u.waitingMeta) > 0 {
		m := u.waitingMeta[0]
		u.waitingMeta = u.waitingMeta[1:]
		return u.fa.store(m, part)
	}
	f, err := os.CreateTemp(u.fa.sb.Dir(), "upload-spool-*")
	if err != nil {
		return err
	}
	u.spooled = append(u.spooled, f)
	_, err = io.Copy(f, part)
	return err
}

func (u *uploadState) cleanup() {
	for _, f := range u.spooled {
		discardSpool(f)
	}
}

func discardSpool(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// store writes one uploaded file. execd reads the whole request before it
// touches the target, so a broken upload leaves the target as it was; here
// the content streams into a hidden file beside the target, which takes its
// place once complete (keeping an existing file's mode and owner). Parents
// are created; mode and owner (checked beforehand) are applied last.
func (fa *fileAPI) store(m uploadMeta, src io.Reader) error {
	ref, err := fa.resolve(m.Path)
	if err != nil {
		return &httpError{http.StatusBadRequest, "INVALID_FILE", err.Error()}
	}
	root := fa.root()
	dir := path.Dir(ref.name)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fsError(ref, err, "error creating directory "+path.Dir(ref.abs)+": ")
	}
	dst, err := fa.openUpload(ref)
	if err != nil {
		return fsError(ref, err, "error opening destination file "+ref.abs+": ")
	}
	if err := dst.write(src); err != nil {
		return &httpError{http.StatusInternalServerError, "RUNTIME_ERROR", "error writing file " + ref.abs + ": " + cause(err)}
	}
	syncDir(root, dir)
	if err := fa.applyPermission(ref, m.perm); err != nil {
		return &httpError{http.StatusInternalServerError, "RUNTIME_ERROR", "error chmoding file " + ref.abs + ": " + err.Error()}
	}
	return nil
}

// uploadFile is where an upload's content goes: a hidden file that
// replaces the target when complete or, when the target is a symlink, the
// file it points to, written in place as execd writes through links.
type uploadFile struct {
	root      *os.Root
	f         *os.File
	tmp, name string      // tmp "": written in place
	old       os.FileInfo // the file replaced, if any
}

func (fa *fileAPI) openUpload(ref fileRef) (*uploadFile, error) {
	u := &uploadFile{root: fa.root(), name: ref.name}
	old, err := u.root.Lstat(ref.name)
	switch {
	case err == nil && old.IsDir():
		return nil, syscall.EISDIR
	case err == nil && old.Mode()&os.ModeSymlink != 0:
		u.f, err = u.root.OpenFile(ref.name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
		return u, err
	case err == nil:
		u.old = old
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	suffix := make([]byte, 8)
	rand.Read(suffix)
	u.tmp = path.Join(path.Dir(ref.name), ".osb-upload-"+hex.EncodeToString(suffix))
	u.f, err = u.root.OpenFile(u.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	return u, err
}

// write copies the content, makes it durable and puts it in place; on
// failure the target is untouched and the hidden file removed.
func (u *uploadFile) write(src io.Reader) error {
	_, err := io.Copy(u.f, src)
	if err == nil {
		err = u.f.Sync()
	}
	if cerr := u.f.Close(); err == nil {
		err = cerr
	}
	if u.tmp == "" {
		return err
	}
	if err == nil && u.old != nil {
		err = u.root.Chmod(u.tmp, u.old.Mode().Perm())
		if uid, gid, _, ok := owner(u.old); ok && err == nil {
			u.root.Chown(u.tmp, int(uid), int(gid)) // only root can; others keep their own
		}
	}
	if err == nil {
		err = u.root.Rename(u.tmp, u.name)
	}
	if err != nil {
		u.root.Remove(u.tmp)
	}
	return err
}

// fsError is the answer to a failed filesystem call on ref, for answers
// decided deep inside a handler: 400 when a symlink leads outside the
// sandbox filesystem or for a pathMistake, else 500 with prefix and the
// system error.
func fsError(ref fileRef, err error, prefix string) *httpError {
	switch {
	case escapesRoot(err):
		return &httpError{http.StatusBadRequest, "INVALID_FILE", outsideMessage(ref.abs)}
	case pathMistake(err):
		return &httpError{http.StatusBadRequest, "INVALID_FILE", prefix + cause(err)}
	}
	return &httpError{http.StatusInternalServerError, "RUNTIME_ERROR", prefix + cause(err)}
}

// syncDir makes a new directory entry durable, as execd does after writing.
func syncDir(root *os.Root, dir string) {
	if d, err := root.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// --- download --------------------------------------------------------------

// download serves a file whole (200, with Content-Length, Last-Modified and
// conditional requests), a byte range of it (206; only the first range of
// a list, as execd), or lines of it (offset/limit, text/plain).
func (fa *fileAPI) download(w http.ResponseWriter, r *http.Request) {
	p, ok := requirePath(w, r)
	if !ok {
		return
	}
	ref, ok := fa.refFor(w, p)
	if !ok {
		return
	}
	f, err := fa.root().Open(ref.name)
	if err != nil {
		fa.openFailed(w, err, ref)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		fileRuntimeError(w, "error reading file "+ref.abs+": "+cause(err))
		return
	}
	if fi.IsDir() {
		// execd answers a bogus 200 and breaks the connection; say what it is.
		fileBadRequest(w, "INVALID_FILE", "error reading file "+ref.abs+": is a directory")
		return
	}
	q := r.URL.Query()
	if q.Has("offset") || q.Has("limit") {
		serveLines(w, r, f)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", attachment(path.Base(ref.abs)))
	if rng := r.Header.Get("Range"); rng != "" {
		serveRange(w, f, rng, fi.Size())
		return
	}
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

func (fa *fileAPI) openFailed(w http.ResponseWriter, err error, ref fileRef) {
	accessFailed(w, err, ref, "open", "error opening file ")
}

// accessFailed answers the failure of operation op on ref: 404 when ref
// does not exist, else as changeFailed does with msg.
func accessFailed(w http.ResponseWriter, err error, ref fileRef, op, msg string) {
	if errors.Is(err, fs.ErrNotExist) && !escapesRoot(err) {
		fileNotFound(w, "file not found. "+op+" "+ref.abs+": "+cause(err))
		return
	}
	changeFailed(w, err, ref, msg+ref.abs+": ")
}

// attachment is execd's Content-Disposition: names that are not plain
// ASCII are percent-encoded in both forms.
func attachment(name string) string {
	plain := utf8.ValidString(name)
	for _, c := range name {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return `attachment; filename="` + name + `"`
	}
	enc := url.PathEscape(name)
	return `attachment; filename="` + enc + `"; filename*=UTF-8''` + enc
}

// serveRange answers one byte range. A range that starts past the end is
// 416 as Go's file server words it; a malformed one is 416 with execd's
// {"code":"UNKNOWN","message":""} (execd means to send that body but its
// headers are already set for the full file, so it never arrives).
func serveRange(w http.ResponseWriter, f *os.File, spec string, size int64) {
	start, end, err := firstRange(spec, size)
	switch {
	case errors.Is(err, errNoOverlap):
		w.Header().Del("Content-Disposition")
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		http.Error(w, "invalid range: failed to overlap", http.StatusRequestedRangeNotSatisfiable)
		return
	case err != nil:
		w.Header().Del("Content-Disposition")
		writeError(w, http.StatusRequestedRangeNotSatisfiable, "UNKNOWN", "")
		return
	}
	n := end - start + 1
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		fileRuntimeError(w, "error reading file: "+cause(err))
		return
	}
	w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, size))
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusPartialContent)
	io.CopyN(w, f, n)
}

var (
	errNoOverlap  = errors.New("range does not overlap the file")
	errBadRangeHd = errors.New("malformed Range header")
)

// firstRange parses the first range of a "bytes=" Range header into
// inclusive offsets, clamped to the file.
func firstRange(spec string, size int64) (start, end int64, err error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(spec), "bytes=")
	if !ok {
		return 0, 0, errBadRangeHd
	}
	first, _, _ := strings.Cut(rest, ",")
	a, b, ok := strings.Cut(strings.TrimSpace(first), "-")
	if !ok {
		return 0, 0, errBadRangeHd
	}
	if a == "" { // suffix: the last b bytes
		n, perr := strconv.ParseInt(b, 10, 64)
		if perr != nil || n < 0 {
			return 0, 0, errBadRangeHd
		}
		if n == 0 || size == 0 {
			return 0, 0, errNoOverlap
		}
		return max(size-n, 0), size - 1, nil
	}
	start, perr := strconv.ParseInt(a, 10, 64)
	if perr != nil || start < 0 {
		return 0, 0, errBadRangeHd
	}
	end = size - 1
	if b != "" {
		e, perr := strconv.ParseInt(b, 10, 64)
		if perr != nil || e < start {
			return 0, 0, errBadRangeHd
		}
		end = min(e, size-1)
	}
	if start >= size {
		return 0, 0, errNoOverlap
	}
	return start, end, nil
}

// serveLines answers line mode: from line offset (1-based), limit lines,
// joined by "\n" without a final newline, line endings stripped.
func serveLines(w http.ResponseWriter, r *http.Request, f *os.File) {
	if r.Header.Get("Range") != "" {
		fileBadRequest(w, "INVALID_REQUEST_BODY", "line-based reading (offset/limit) and byte range (Range header) are mutually exclusive")
		return
	}
	q := r.URL.Query()
	offset, limit := 1, -1
	for name, dst := range map[string]*int{"offset": &offset, "limit": &limit} {
		if !q.Has(name) {
			continue
		}
		n, err := strconv.Atoi(q.Get(name))
		if err != nil || n < 1 {
			fileBadRequest(w, "INVALID_REQUEST_BODY", fmt.Sprintf("invalid query parameter '%s': %s", name, q.Get(name)))
			return
		}
		*dst = n
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	br := bufio.NewReaderSize(f, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	for line, sent := 1, 0; limit < 0 || sent < limit; line++ {
		text, err := br.ReadBytes('\n')
		if len(text) == 0 && err != nil {
			return
		}
		if line >= offset {
			if sent > 0 {
				bw.WriteByte('\n')
			}
			bw.Write(bytes.TrimRight(text, "\r\n"))
			sent++
		}
		if err != nil {
			return
		}
	}
}

// --- info, search, list ------------------------------------------------------

// info answers a map keyed by each path exactly as given. One missing path
// fails the whole call, as with execd.
func (fa *fileAPI) info(w http.ResponseWriter, r *http.Request) {
	out := map[string]fileInfo{}
	for _, p := range r.URL.Query()["path"] {
		ref, ok := fa.refFor(w, p)
		if !ok {
			return
		}
		fi, err := fa.root().Lstat(ref.name)
		if err != nil {
			// execd's words: it wraps its own not-found in another.
			accessFailed(w, err, ref, "file not found: "+ref.abs+": lstat", "error accessing file ")
			return
		}
		out[p] = describe(ref.abs, fi)
	}
	writeJSON(w, http.StatusOK, out)
}

func (fa *fileAPI) statFailed(w http.ResponseWriter, err error, ref fileRef) {
	accessFailed(w, err, ref, "stat", "error accessing file ")
}

// search walks below path and returns the files (not directories) whose
// base name matches the glob, as execd does: "*.txt" and "**/a.txt" match
// at any depth, "sub/*.txt" never does. Symlinks are listed, not followed.
func (fa *fileAPI) search(w http.ResponseWriter, r *http.Request) {
	p, ok := requirePath(w, r)
	if !ok {
		return
	}
	pattern := r.URL.Query().Get("pattern")
	if pattern == "" {
		pattern = "**"
	}
	if _, err := filepath.Match(pattern, ""); err != nil {
		// 500 on execd; the client's pattern is at fault.
		fileBadRequest(w, "INVALID_REQUEST_BODY", fmt.Sprintf("error searching files. invalid pattern %s: %v", pattern, err))
		return
	}
	ref, ok := fa.dirRefFor(w, p)
	if !ok {
		return
	}
	if _, err := fa.root().Stat(ref.name); err != nil {
		fa.statFailed(w, err, ref)
		return
	}
	out := []fileInfo{}
	fs.WalkDir(fa.root().FS(), ref.name, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !matchBase(pattern, d.Name()) {
			return nil // unreadable directories are skipped, not fatal
		}
		if fi, err := fa.root().Lstat(name); err == nil {
			out = append(out, describe(absPath(name), fi))
		}
		return nil
	})
	writeJSON(w, http.StatusOK, out)
}

// matchBase matches a glob against a base name; leading "**/" may stand
// for no directories at all.
func matchBase(pattern, base string) bool {
	for {
		trimmed, ok := strings.CutPrefix(pattern, "**/")
		if !ok {
			break
		}
		pattern = trimmed
	}
	ok, _ := filepath.Match(pattern, base)
	return ok
}

// list answers the entries below a directory down to depth levels, each
// directory's entries in lexical order right after it. Symlinks are listed
// and never followed; a symlink as the directory itself is refused.
func (fa *fileAPI) list(w http.ResponseWriter, r *http.Request) {
	p, ok := requirePath(w, r)
	if !ok {
		return
	}
	depth := 1
	if q := r.URL.Query(); q.Has("depth") {
		n, err := strconv.Atoi(q.Get("depth"))
		if err != nil || n < 0 {
			fileBadRequest(w, "INVALID_REQUEST_BODY", "invalid query parameter 'depth': "+q.Get("depth"))
			return
		}
		depth = n
	}
	ref, ok := fa.dirRefFor(w, p)
	if !ok {
		return
	}
	fi, err := fa.root().Lstat(ref.name)
	switch {
	case err != nil:
		accessFailed(w, err, ref, "lstat", "error accessing file ")
		return
	case fi.Mode()&os.ModeSymlink != 0:
		fileBadRequest(w, "INVALID_REQUEST_BODY", "path is a symbolic link, refusing to traverse: "+ref.abs)
		return
	case !fi.IsDir():
		fileBadRequest(w, "INVALID_REQUEST_BODY", "path is not a directory: "+ref.abs)
		return
	}
	out := []fileInfo{}
	if err := fa.listInto(&out, ref.name, depth); err != nil {
		fileRuntimeError(w, "error listing directory "+ref.abs+": "+cause(err))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (fa *fileAPI) listInto(out *[]fileInfo, dir string, depth int) error {
	if depth == 0 {
		return nil
	}
	entries, err := fs.ReadDir(fa.root().FS(), dir) // sorted by name
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		fi, err := fa.root().Lstat(name)
		if err != nil {
			continue // removed meanwhile
		}
		*out = append(*out, describe(absPath(name), fi))
		if fi.IsDir() {
			if err := fa.listInto(out, name, depth-1); err != nil {
				return err
			}
		}
	}
	return nil
}

// --- changes -----------------------------------------------------------------

// mkdir is mkdir -p per path; mode and owner apply only to a directory it
// created (an existing one keeps its mode), as with execd.
func (fa *fileAPI) mkdir(w http.ResponseWriter, r *http.Request) {
	var req map[string]permission
	if !decodeFileBody(w, r, &req) {
		return
	}
	perms, ok := checkPermissions(w, req)
	if !ok {
		return
	}
	for _, p := range slices.Sorted(maps.Keys(req)) {
		ref, ok := fa.refFor(w, p)
		if !ok {
			return
		}
		fi, statErr := fa.root().Lstat(ref.name)
		if statErr == nil && !fi.IsDir() {
			fileBadRequest(w, "INVALID_FILE", "error accessing file: mkdir "+ref.abs+": not a directory")
			return
		}
		if err := fa.root().MkdirAll(ref.name, 0o755); err != nil {
			changeFailed(w, err, ref, "error accessing file: mkdir "+ref.abs+": ")
			return
		}
		if statErr != nil {
			if err := fa.applyPermission(ref, perms[p]); err != nil {
				fileRuntimeError(w, "error changing permissions of "+ref.abs+": "+err.Error())
				return
			}
		}
	}
}

// removeDirs is rm -rf per path; missing paths and plain files are fine.
func (fa *fileAPI) removeDirs(w http.ResponseWriter, r *http.Request) {
	for _, p := range r.URL.Query()["path"] {
		ref, ok := fa.refFor(w, p)
		if !ok {
			return
		}
		if isAreaRoot(ref) {
			fileBadRequest(w, "INVALID_FILE", "error removing directory "+ref.abs+": it is a mount point of the sandbox")
			return
		}
		if err := fa.root().RemoveAll(ref.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			changeFailed(w, err, ref, "error removing directory "+ref.abs+": ")
			return
		}
	}
}

// removeFiles deletes files; missing ones are fine, a directory is refused
// (400 here; execd answers 500).
func (fa *fileAPI) removeFiles(w http.ResponseWriter, r *http.Request) {
	for _, p := range r.URL.Query()["path"] {
		ref, ok := fa.refFor(w, p)
		if !ok {
			return
		}
		fi, err := fa.root().Lstat(ref.name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			changeFailed(w, err, ref, "error removing file "+ref.abs+": ")
			return
		}
		if fi.IsDir() {
			fileBadRequest(w, "INVALID_FILE", "error removing file "+ref.abs+": path is a directory: "+ref.abs)
			return
		}
		if err := fa.root().Remove(ref.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fileRuntimeError(w, "error removing file "+ref.abs+": "+cause(err))
			return
		}
	}
}

type moveItem struct {
	Src  string `json:"src"`
	Dest string `json:"dest"`
}

// move renames each src to dest, creating dest's parents and never
// replacing an existing dest, as with execd (which answers 500 where this
// answers 409).
func (fa *fileAPI) move(w http.ResponseWriter, r *http.Request) {
	var req []moveItem
	if !decodeFileBody(w, r, &req) {
		return
	}
	for _, m := range req {
		if m.Src == "" || m.Dest == "" {
			fileBadRequest(w, "INVALID_REQUEST_BODY", "src and dest must not be empty")
			return
		}
		src, ok := fa.refFor(w, m.Src)
		if !ok {
			return
		}
		dest, ok := fa.refFor(w, m.Dest)
		if !ok {
			return
		}
		if err := fa.moveOne(src, dest); err != nil {
			err.write(w)
			return
		}
	}
}

func (fa *fileAPI) moveOne(src, dest fileRef) *httpError {
	root := fa.root()
	if _, err := root.Lstat(src.name); err != nil {
		if escapesRoot(err) {
			return &httpError{http.StatusBadRequest, "INVALID_FILE", outsideMessage(src.abs)}
		}
		return &httpError{http.StatusNotFound, "FILE_NOT_FOUND", "file not found. source path not found: " + src.abs}
	}
	if isAreaRoot(src) {
		return &httpError{http.StatusBadRequest, "INVALID_FILE", "error renaming " + src.abs + ": it is a mount point of the sandbox"}
	}
	if _, err := root.Lstat(dest.name); err == nil {
		return &httpError{http.StatusConflict, "RUNTIME_ERROR", "error accessing file: destination path already exists: " + dest.abs}
	}
	if err := root.MkdirAll(path.Dir(dest.name), 0o755); err != nil {
		return fsError(dest, err, "error accessing file: mkdir "+path.Dir(dest.abs)+": ")
	}
	if err := root.Rename(src.name, dest.name); err != nil {
		return fsError(dest, err, "error renaming "+src.abs+" to "+dest.abs+": ")
	}
	return nil
}

// replace substitutes text in files in place (keeping mode and owner).
// The file is read whole: it is meant for text files.
func (fa *fileAPI) replace(w http.ResponseWriter, r *http.Request) {
	var req map[string]struct {
		Old string `json:"old"`
		New string `json:"new"`
	}
	if !decodeFileBody(w, r, &req) {
		return
	}
	keys := slices.Sorted(maps.Keys(req))
	for _, p := range keys {
		if req[p].Old == "" {
			fileBadRequest(w, "INVALID_REQUEST_BODY", "old content must not be empty")
			return
		}
	}
	counts := map[string]map[string]int{}
	for _, p := range keys {
		ref, ok := fa.refFor(w, p)
		if !ok {
			return
		}
		n, err := fa.replaceIn(ref, []byte(req[p].Old), []byte(req[p].New))
		if err != nil {
			fa.openFailed(w, err, ref)
			return
		}
		counts[p] = map[string]int{"replacedCount": n}
	}
	if v, _ := strconv.ParseBool(r.URL.Query().Get("verbose")); v {
		writeJSON(w, http.StatusOK, counts)
	}
}

func (fa *fileAPI) replaceIn(ref fileRef, old, repl []byte) (int, error) {
	data, err := fa.root().ReadFile(ref.name)
	if err != nil {
		return 0, err
	}
	n := bytes.Count(data, old)
	if n == 0 {
		return 0, nil
	}
	return n, fa.root().WriteFile(ref.name, bytes.ReplaceAll(data, old, repl), 0)
}

// chmod sets mode and ownership. A missing file is a 404 and a bad mode or
// unknown owner a 400, found before anything changes (execd answers 500
// for each, part way through).
func (fa *fileAPI) chmod(w http.ResponseWriter, r *http.Request) {
	var req map[string]permission
	if !decodeFileBody(w, r, &req) {
		return
	}
	perms, ok := checkPermissions(w, req)
	if !ok {
		return
	}
	keys := slices.Sorted(maps.Keys(req))
	refs := make([]fileRef, len(keys))
	for i, p := range keys {
		if refs[i], ok = fa.refFor(w, p); !ok {
			return
		}
		if _, err := fa.root().Stat(refs[i].name); err != nil {
			accessFailed(w, err, refs[i], "chmod", "error changing permissions of ")
			return
		}
	}
	for i, p := range keys {
		ref := refs[i]
		if err := fa.applyPermission(ref, perms[p]); err != nil {
			fileRuntimeError(w, "error changing permissions of "+ref.abs+": "+err.Error())
			return
		}
	}
}
