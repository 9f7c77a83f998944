package server

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// volume is one validated entry of a create request's volumes.
type volume struct {
	name      string
	hostPath  string // host backend
	claim     string // pvc backend
	create    bool   // pvc createIfNotExists
	deleteEnd bool   // pvc deleteOnSandboxTermination
	ossfs     bool
	mountPath string
	readOnly  bool
	subPath   string
}

// Patterns of the lifecycle spec's Volume, Host and PVC.
// Compiled on first use, not at start-up, which every command pays for.
var (
	dnsLabelPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	dnsLabelRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(dnsLabelPattern) })
	mountPathRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/.*`) })
	hostPathRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(/|[A-Za-z]:[\\/])`) })
)

// Volume error codes, as the real server spells them.
const (
	codeVolumeDuplicate   = "VOLUME::DUPLICATE_NAME"
	codeVolumeMountPath   = "VOLUME::INVALID_MOUNT_PATH"
	codeVolumeSubPath     = "VOLUME::INVALID_SUB_PATH"
	codeVolumeHostPath    = "VOLUME::INVALID_HOST_PATH"
	codeVolumeNotAllowed  = "VOLUME::HOST_PATH_NOT_ALLOWED"
	codeVolumeUnsupported = "VOLUME::UNSUPPORTED_BACKEND"
	codeVolumeHostCreate  = "VOLUME::HOST_PATH_CREATE_FAILED"
	codeVolumePVCNotFound = "VOLUME::PVC_NOT_FOUND"
	codeVolumePVCFailed   = "VOLUME::PVC_INSPECT_FAILED"
)

// volumes reads the optional volumes list: pydantic's 422 details for its
// shape, as the real server's request model gives them.
func (v *fields) volumes(body map[string]any) []volume {
	x := body["volumes"]
	if x == nil {
		return nil
	}
	list, ok := x.([]any)
	if !ok {
		v.add(typeErr([]any{"body", "volumes"}, "list_type", "Input should be a valid list", x))
		return nil
	}
	out := make([]volume, 0, len(list))
	for i, item := range list {
		loc := []any{"body", "volumes", i}
		m, ok := item.(map[string]any)
		if !ok {
			v.add(typeErr(loc, "model_attributes_type", "Input should be a valid dictionary or object to extract fields from", item))
			continue
		}
		out = append(out, v.volume(m, loc))
	}
	return out
}

func (v *fields) volume(m map[string]any, loc []any) volume {
	at := func(k ...any) []any { return append(loc[:len(loc):len(loc)], k...) }
	bad := len(v.details)
	vol := volume{
		name:      v.patterned(m, "name", at("name"), dnsLabelRe(), dnsLabelPattern, true),
		mountPath: v.patterned(m, "mountPath", at("mountPath"), mountPathRe(), `^/.*`, true),
		subPath:   v.str(m, "subPath"),
		create:    true,
	}
	if r, ok := m["readOnly"].(bool); ok {
		vol.readOnly = r
	} else if m["readOnly"] != nil {
		v.add(typeErr(at("readOnly"), "bool_type", "Input should be a valid boolean", m["readOnly"]))
	}
	backends := 0
	for _, k := range []string{"host", "pvc", "ossfs"} {
		b, present := m[k]
		if !present || b == nil {
			continue
		}
		backends++
		bm, ok := b.(map[string]any)
		if !ok {
			v.add(typeErr(at(k), "model_attributes_type", "Input should be a valid dictionary or object to extract fields from", b))
			continue
		}
		switch k {
		case "host":
			vol.hostPath = v.patterned(bm, "path", at(k, "path"), hostPathRe(), `^(/|[A-Za-z]:[\\/])`, true)
		case "pvc":
			vol.claim = v.patterned(bm, "claimName", at(k, "claimName"), dnsLabelRe(), dnsLabelPattern, true)
			if c, ok := bm["createIfNotExists"].(bool); ok {
				vol.create = c
			}
			vol.deleteEnd, _ = bm["deleteOnSandboxTermination"].(bool)
		case "ossfs":
			vol.ossfs = true
		}
	}
	for k, val := range m {
		switch k {
		case "name", "host", "pvc", "ossfs", "mountPath", "readOnly", "subPath":
		default:
			v.add(typeErr(at(k), "extra_forbidden", "Extra inputs are not permitted", val))
		}
	}
	if len(v.details) == bad && backends != 1 {
		which := "none was provided"
		if backends > 1 {
			which = "multiple were provided"
		}
		v.add(detail{Type: "value_error", Loc: loc, Input: m, Ctx: map[string]any{"error": map[string]any{}},
			Msg: "Value error, Exactly one backend (host, pvc, ossfs) must be specified, but " + which + "."})
	}
	return vol
}

// patterned reads a string field that must match a pattern.
func (v *fields) patterned(m map[string]any, name string, loc []any, re *regexp.Regexp, pattern string, required bool) string {
	x, present := m[name]
	if !present || x == nil {
		if required {
			v.add(missing(loc, m))
		}
		return ""
	}
	s, ok := x.(string)
	if !ok {
		v.add(typeErr(loc, "string_type", "Input should be a valid string", x))
		return ""
	}
	if !re.MatchString(s) {
		v.add(detail{Type: "string_pattern_mismatch", Loc: loc, Input: s,
			Msg: "String should match pattern '" + pattern + "'", Ctx: map[string]any{"pattern": pattern}})
	}
	return s
}

// checkVolumes gives the real server's 400 for volumes it refuses before
// creating anything, or an empty message.
func (s *Server) checkVolumes(vols []volume) (code, msg string) {
	seen := map[string]bool{}
	for _, vol := range vols {
		if seen[vol.name] {
			return codeVolumeDuplicate, fmt.Sprintf("Duplicate volume name '%s'. Each volume must have a unique name.", vol.name)
		}
		seen[vol.name] = true
		if vol.mountPath == "/" {
			return codeVolumeMountPath, "Mount path '/' would cover the sandbox's whole filesystem."
		}
		if code, msg := checkSubPath(vol.subPath); msg != "" {
			return code, msg
		}
		switch {
		case vol.ossfs:
			return codeVolumeUnsupported, fmt.Sprintf("Volume '%s': the ossfs backend is not supported by the local server.", vol.name)
		case vol.hostPath != "":
			if code, msg := checkHostPath(vol.hostPath, s.opts.AllowHostPaths); msg != "" {
				return code, msg
			}
		}
	}
	if len(vols) > 0 && !s.isolation.Available {
		return codeNotSupported, "Volumes need isolated sandboxes; this server runs them without namespaces."
	}
	return "", ""
}

func checkSubPath(sub string) (code, msg string) {
	switch {
	case sub == "":
	case strings.HasPrefix(sub, "/"):
		return codeVolumeSubPath, fmt.Sprintf("SubPath '%s' must be a relative path, not absolute.", sub)
	case containsDotDot(sub):
		return codeVolumeSubPath, fmt.Sprintf("SubPath '%s' contains path traversal '..' which is not allowed.", sub)
	}
	return "", ""
}

func containsDotDot(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// checkHostPath refuses host paths that are not clean, absolute and under
// one of the allowed prefixes (none allowed: every host path refused, as
// the real server's empty allowed_host_paths).
func checkHostPath(p string, allowed []string) (code, msg string) {
	switch {
	case !strings.HasPrefix(p, "/"):
		return codeVolumeHostPath, fmt.Sprintf("Host path '%s' must be an absolute path on this Linux host.", p)
	case strings.Contains(p, "/.."):
		return codeVolumeHostPath, fmt.Sprintf("Host path '%s' contains path traversal component '..'.", p)
	case strings.Contains(p, "//") || len(p) > 1 && strings.HasSuffix(p, "/"):
		return codeVolumeHostPath, fmt.Sprintf("Host path '%s' is not normalized. Remove redundant slashes.", p)
	}
	if !underAny(p, allowed) {
		return codeVolumeNotAllowed, fmt.Sprintf("Host path '%s' is not under any allowed prefix. Allowed prefixes: %s", p, pyList(allowed))
	}
	return "", ""
}

func underAny(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		pre = strings.TrimSuffix(pre, "/")
		if p == pre || strings.HasPrefix(p, pre+"/") || pre == "" {
			return true
		}
	}
	return false
}

// pyList prints a list of strings as the real server (Python) does.
func pyList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// mountsFor resolves the volumes to host directories: a host path (made
// if missing), or a named volume under the data directory (made when
// allowed). Each is opened, and the directory opened is the one checked
// (its real path under an allowed prefix, or in its volume) and mounted,
// so a symlink swapped in by a sandbox cannot redirect the mount. It
// returns the mounts (close them after the start) and the named volumes
// it made that go with the sandbox.
func (s *Server) mountsFor(vols []volume) (mounts []sandbox.Mount, made []string, status int, code string, err error) {
	fail := func(status int, code string, err error) ([]sandbox.Mount, []string, int, string, error) {
		closeMounts(mounts)
		for _, name := range made {
			sandbox.RemoveTree(filepath.Dir(s.volumeDir(name)))
		}
		return nil, nil, status, code, err
	}
	for _, vol := range vols {
		var dir *os.File
		var real string
		switch {
		case vol.hostPath != "":
			src := filepath.Join(vol.hostPath, vol.subPath)
			if err := os.MkdirAll(src, 0o755); err != nil {
				return fail(http.StatusInternalServerError, codeVolumeHostCreate,
					fmt.Errorf("Volume '%s': could not ensure host path directory exists at '%s': %v", vol.name, src, errors.Unwrap(err)))
			}
			if dir, real, err = openDir(src); err != nil {
				return fail(http.StatusInternalServerError, codeVolumeHostCreate, fmt.Errorf("Volume '%s': %v", vol.name, err))
			}
			if !underAny(real, realPaths(s.opts.AllowHostPaths)) {
				dir.Close()
				return fail(http.StatusBadRequest, codeVolumeNotAllowed,
					fmt.Errorf("Host path '%s' is not under any allowed prefix. Allowed prefixes: %s", real, pyList(s.opts.AllowHostPaths)))
			}
		default:
			vdir := s.volumeDir(vol.claim)
			if _, err := os.Stat(vdir); err != nil {
				if !vol.create {
					return fail(http.StatusBadRequest, codeVolumePVCNotFound,
						fmt.Errorf("Volume '%s': named volume '%s' does not exist. Named volumes must be created before sandbox creation.", vol.name, vol.claim))
				}
				if err := os.MkdirAll(vdir, 0o755); err != nil {
					return fail(http.StatusInternalServerError, codeVolumePVCFailed,
						fmt.Errorf("Volume '%s': failed to create named volume '%s': %v", vol.name, vol.claim, err))
				}
				if vol.deleteEnd {
					made = append(made, vol.claim)
				}
			}
			if dir, real, err = openInVolume(vdir, vol.subPath); err != nil {
				return fail(http.StatusBadRequest, codeVolumeSubPath, fmt.Errorf("Volume '%s': %v", vol.name, err))
			}
			if err := sandbox.GiveToSandbox(dir); err != nil {
				dir.Close()
				return fail(http.StatusInternalServerError, codeVolumePVCFailed, err)
			}
		}
		mounts = append(mounts, sandbox.Mount{Source: real, Dir: dir, Target: path.Clean(vol.mountPath), ReadOnly: vol.readOnly,
			MapOwners: vol.hostPath != ""})
	}
	return mounts, made, 0, "", nil
}

func closeMounts(ms []sandbox.Mount) {
	for _, m := range ms {
		if m.Dir != nil {
			m.Dir.Close()
		}
	}
}

// openDir opens a directory (following symlinks) and returns it with the
// real path of what was opened.
func openDir(p string) (*os.File, string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, "", err
	}
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		f.Close()
		return nil, "", fmt.Errorf("%s is not a directory", p)
	}
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, real, nil
}

// openInVolume opens subPath (made if missing) of a named volume without
// leaving it, whatever symlinks a sandbox left there.
func openInVolume(vdir, sub string) (*os.File, string, error) {
	root, err := os.OpenRoot(vdir)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	name := "."
	if sub != "" {
		name = filepath.Clean(sub)
		if err := root.MkdirAll(name, 0o755); err != nil {
			return nil, "", fmt.Errorf("subPath %s: %w", sub, err)
		}
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, "", fmt.Errorf("subPath %s: %w", sub, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		f.Close()
		return nil, "", fmt.Errorf("subPath %s is not a directory", sub)
	}
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, real, nil
}

func realPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		out = append(out, p)
	}
	return out
}

// volumeDir is where a named volume's files live; it outlives sandboxes.
func (s *Server) volumeDir(claim string) string {
	return filepath.Join(s.dataDir, "volumes", claim, "_data")
}

// claimsOf lists the named volumes among vols.
func claimsOf(vols []volume) []string {
	var out []string
	for _, v := range vols {
		if v.claim != "" {
			out = append(out, v.claim)
		}
	}
	return out
}
