// Package image gets the root filesystems of OCI images for `osb server`:
// from a directory of OCI layouts and `docker save` tarballs, from the
// local cache, or from the image's registry (go-containerregistry). Layers
// are unpacked once each, by DiffID, into directories in the overlayfs
// format (whiteouts as 0/0 character devices, opaque directories marked
// with the user.overlay.opaque attribute), which sandboxes stack under a
// writable layer of their own.
package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Options configures a Store.
type Options struct {
	Dir      string // cache: layers/<diffid hex>/ and refs/<key>.json; created if missing
	ImageDir string // "" or a directory of OCI layouts and docker-save tarballs, looked up first
	// Owner maps an owner in a layer to the owner its file gets on disk
	// (a root server shifts ids into its sandboxes' range); nil keeps
	// the process's own.
	Owner func(uid, gid int) (int, int)
	// Keychain finds registry credentials when a request brings none;
	// nil means authn.DefaultKeychain (~/.docker/config.json).
	Keychain authn.Keychain
	// Transport reaches registries; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// StallTimeout ends a pull whose registry sends nothing for this long
	// (no answer, or a download that stops); 0 means one minute. A pull
	// that makes progress is never cut short.
	StallTimeout time.Duration
}

// Auth is the request's image.auth.
type Auth struct{ Username, Password string }

// Image is an image ready to run: its layers unpacked, its configuration.
type Image struct {
	Ref    string   // the reference as asked
	Digest string   // manifest digest, "sha256:…"
	Layers []string // unpacked layer directories, lowest first
	Config v1.Config
}

// Store resolves image references to unpacked images. Safe for concurrent use.
type Store struct {
	opts    Options
	local   map[string]localImage // canonical reference → image in ImageDir
	layerMu sync.Map              // diffid → *sync.Mutex: one unpack per layer at a time
}

// New opens (creating) the cache and reads the image directory's index.
func New(opts Options) (*Store, error) {
	for _, d := range []string{"layers", "refs"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = time.Minute
	}
	if opts.Keychain == nil {
		opts.Keychain = authn.DefaultKeychain
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	opts.Transport = idleTransport{base: opts.Transport, idle: opts.StallTimeout}
	s := &Store{opts: opts, local: map[string]localImage{}}
	if opts.ImageDir != "" {
		local, err := scanImageDir(opts.ImageDir)
		if err != nil {
			return nil, fmt.Errorf("--image-dir %s: %w", opts.ImageDir, err)
		}
		s.local = local
	}
	return s, nil
}

// Names lists the references the image directory provides, canonical.
func (s *Store) Names() []string {
	out := make([]string, 0, len(s.local))
	for n := range s.local {
		out = append(out, n)
	}
	return out
}

// Platform is what an image must be built for; the zero value is this
// host's.
type Platform struct{ OS, Arch string }

func (p Platform) v1() v1.Platform {
	if p.OS == "" {
		p.OS = runtime.GOOS
	}
	if p.Arch == "" {
		p.Arch = runtime.GOARCH
	}
	return v1.Platform{OS: p.OS, Architecture: p.Arch}
}

// Resolve returns the image ref names, unpacked: from the image
// directory, else from the cache (no registry asked, as a Docker host
// uses an image it has), else pulled from its registry with auth (or
// the keychain's credentials).
func (s *Store) Resolve(ctx context.Context, ref string, auth *Auth, p Platform) (*Image, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	key := cacheKey(r.Name(), p.v1())
	if l, ok := s.local[r.Name()]; ok {
		// Reading a docker-save tarball again costs as much as the
		// layers: the cache serves it until the file changes.
		if img, err := s.cachedSince(ref, key, l.path); err == nil {
			return img, nil
		}
		img, err := l.open()
		if err != nil {
			return nil, err
		}
		return s.unpack(ctx, ref, key, img)
	}
	if img, err := s.cached(ref, key); err == nil {
		return img, nil
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithPlatform(p.v1()), remote.WithTransport(s.opts.Transport)}
	if auth != nil {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: auth.Username, Password: auth.Password}))
	} else {
		opts = append(opts, remote.WithAuthFromKeychain(s.opts.Keychain))
	}
	img, err := remote.Image(r, opts...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	out, err := s.unpack(ctx, ref, key, img)
	if err != nil {
		return nil, classify(ctx, err)
	}
	return out, nil
}

// classify names a pull given up because its create was.
func classify(ctx context.Context, err error) error {
	var te *transport.Error
	if !errors.As(err, &te) && !errors.Is(err, errStalled) && ctx.Err() != nil {
		return fmt.Errorf("pull abandoned: %w", err)
	}
	return err
}

// cacheKey names the cache entry of a reference for a platform.
func cacheKey(canonical string, p v1.Platform) string {
	h := sha256.Sum256([]byte(canonical + "\x00" + p.OS + "/" + p.Architecture))
	return hex.EncodeToString(h[:16])
}

// refEntry is what the cache keeps of a resolved reference.
type refEntry struct {
	Ref     string    `json:"ref"`
	Digest  string    `json:"digest"`
	DiffIDs []string  `json:"diffIds"`
	Config  v1.Config `json:"config"`
}

// cachedSince is the cache entry of ref if it is newer than the file or
// directory src that the image comes from.
func (s *Store) cachedSince(ref, key, src string) (*Image, error) {
	entry, err := os.Stat(s.refPath(key))
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(src)
	if err != nil || !fi.ModTime().Before(entry.ModTime()) {
		return nil, errors.New("image changed since it was cached")
	}
	return s.cached(ref, key)
}

func (s *Store) refPath(key string) string { return filepath.Join(s.opts.Dir, "refs", key+".json") }

func (s *Store) cached(ref, key string) (*Image, error) {
	b, err := os.ReadFile(s.refPath(key))
	if err != nil {
		return nil, err
	}
	var e refEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	img := &Image{Ref: ref, Digest: e.Digest, Config: e.Config}
	for _, d := range e.DiffIDs {
		dir := s.layerDir(d)
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		img.Layers = append(img.Layers, dir)
	}
	return img, nil
}

func (s *Store) layerDir(diffID string) string {
	h, err := v1.NewHash(diffID)
	if err != nil {
		return filepath.Join(s.opts.Dir, "layers", "invalid")
	}
	return filepath.Join(s.opts.Dir, "layers", h.Algorithm+"-"+h.Hex)
}

// unpack unpacks every layer of img not yet in the cache and records ref.
func (s *Store) unpack(ctx context.Context, ref, key string, img v1.Image) (*Image, error) {
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	if cf.OS != "" && cf.OS != "linux" {
		return nil, fmt.Errorf("image is for %s/%s; this server runs linux sandboxes", cf.OS, cf.Architecture)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	out := &Image{Ref: ref, Digest: digest.String(), Config: cf.Config}
	entry := refEntry{Ref: ref, Digest: digest.String(), Config: cf.Config}
	for _, l := range layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		diffID, err := l.DiffID()
		if err != nil {
			return nil, err
		}
		dir, err := s.unpackLayer(diffID.String(), l)
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", diffID, err)
		}
		out.Layers = append(out.Layers, dir)
		entry.DiffIDs = append(entry.DiffIDs, diffID.String())
	}
	b, _ := json.Marshal(entry)
	if err := writeAtomic(s.refPath(key), b); err != nil {
		return nil, err
	}
	return out, nil
}

// unpackLayer unpacks a layer into its directory unless it is there: into
// a temporary directory first, renamed when whole, so a crash or a failed
// download never leaves half a layer to be reused.
func (s *Store) unpackLayer(diffID string, l v1.Layer) (string, error) {
	mu, _ := s.layerMu.LoadOrStore(diffID, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	dir := s.layerDir(diffID)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".unpack-")
	if err != nil {
		return "", err
	}
	rc, err := l.Uncompressed()
	if err == nil {
		err = unpackTar(rc, tmp, s.opts.Owner)
		if cerr := rc.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err == nil && s.opts.Owner != nil {
		uid, gid := s.opts.Owner(0, 0)
		err = os.Lchown(tmp, uid, gid)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return dir, nil
}

// writeAtomic replaces path with b whole, also when two creates of the
// same image write it at once.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".ref-")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
