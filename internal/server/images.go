package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osb-dev/osb/internal/server/image"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

const codeImagePullFailed = "DOCKER::SANDBOX_IMAGE_PULL_FAILED"

// openImages opens the image cache (DataDir/images) when images are used.
func (s *Server) openImages() error {
	if s.opts.Images == nil {
		return nil
	}
	o := *s.opts.Images
	o.Dir = filepath.Join(s.dataDir, "images")
	o.Owner = sandbox.ImageOwner
	st, err := image.New(o)
	if err != nil {
		return err
	}
	s.images = st
	return nil
}

// imageRun is what a sandbox runs: an image's root and configuration, or
// (rootfs nil) the host's programs.
type imageRun struct {
	uri    string
	rootfs *sandbox.Rootfs
	imgEnv []string // the image's Env, KEY=VALUE
	status string   // status.message; "" for the usual one
}

// env is the sandbox environment: the image's, then the request's.
func (r imageRun) env(req map[string]string) map[string]string {
	out := map[string]string{}
	for _, kv := range r.imgEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	for k, v := range req {
		out[k] = v
	}
	return out
}

// imageFor gets the image a create names, unpacked, or says why not: the
// registry's reason (500 DOCKER::SANDBOX_IMAGE_PULL_FAILED, as the real
// server answers a failed pull, a registry out of reach included).
func (s *Server) imageFor(ctx context.Context, req createRequest) (imageRun, int, string, error) {
	if req.imageURI == "" && req.snapshotID != "" && s.snapshots != nil {
		// A snapshot of an image sandbox runs on that image again.
		if m, ok := s.snapshots.get(req.snapshotID); ok && m.Image != "" {
			req.imageURI = m.Image
		}
	}
	if req.imageURI == "" || s.images == nil || !s.isolation.Available {
		return imageRun{}, 0, "", nil
	}
	img, err := s.images.Resolve(ctx, req.imageURI, req.imageAuth, imagePlatform(req.platform))
	if err != nil {
		return imageRun{}, http.StatusInternalServerError, codeImagePullFailed, fmt.Errorf("Failed to pull image %s: %v", req.imageURI, err)
	}
	rootfs := &sandbox.Rootfs{Layers: img.Layers, WorkDir: img.Config.WorkingDir}
	if img.Config.User != "" && os.Geteuid() == 0 {
		uid, gid, err := img.User()
		if err != nil {
			return imageRun{}, http.StatusInternalServerError, codeCreateFailed, err
		}
		rootfs.User = &sandbox.User{UID: uid, GID: gid}
	}
	env := img.Config.Env
	if home := img.Home(userOf(rootfs)); home != "" && !hasKey(env, "HOME") {
		// HOME follows the user, as a container runtime sets it.
		env = append(slices.Clip(env), "HOME="+home)
	}
	s.log.event("image %s: %s, %d layers", req.imageURI, img.Digest, len(img.Layers))
	status := "local sandbox, isolated by user, mount, pid, uts, ipc and network namespaces; image " + req.imageURI + " (" + img.Digest + ")"
	return imageRun{uri: req.imageURI, rootfs: rootfs, imgEnv: env, status: status}, 0, "", nil
}

// imagePlatform is the platform a create asked for (checked already:
// this host's), or the zero value, which is the host's too.
func imagePlatform(raw json.RawMessage) image.Platform {
	var p struct{ OS, Arch string }
	json.Unmarshal(raw, &p) // nil or checked JSON: a zero p is the default
	return image.Platform{OS: p.OS, Arch: p.Arch}
}

// imageAuth reads image.auth (its shape was checked with the rest).
func imageAuth(body map[string]any) *image.Auth {
	img, _ := body["image"].(map[string]any)
	a, _ := img["auth"].(map[string]any)
	if a == nil {
		return nil
	}
	u, _ := a["username"].(string)
	p, _ := a["password"].(string)
	if u == "" && p == "" {
		return nil
	}
	return &image.Auth{Username: u, Password: p}
}

// removeVolumes deletes named volumes made for one sandbox, but not one
// that another live sandbox mounts too (Docker refuses to remove a volume
// in use).
func (s *Server) removeVolumes(names []string) {
	for _, n := range names {
		if s.volumeInUse(n) {
			s.log.event("volume %s: kept, another sandbox mounts it", n)
			continue
		}
		if err := sandbox.RemoveTree(filepath.Dir(s.volumeDir(n))); err != nil {
			s.log.event("volume %s: %v", n, err)
		}
	}
}

func userOf(r *sandbox.Rootfs) uint32 {
	if r.User == nil {
		return 0
	}
	return r.User.UID
}

func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			return true
		}
	}
	return false
}

func (s *Server) volumeInUse(claim string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rec := range s.records {
		if slices.Contains(rec.claims, claim) && rec.state != stateStopping {
			return true
		}
	}
	return false
}
