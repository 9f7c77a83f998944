package image_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/osb-dev/osb/internal/server/image"
	"github.com/osb-dev/osb/internal/server/image/imagetest"
)

func newStore(t *testing.T, imageDir string) *image.Store {
	t.Helper()
	return storeWithStall(t, imageDir, 0)
}

// storeWithStall is newStore with a StallTimeout (0: the default).
func storeWithStall(t *testing.T, imageDir string, stall time.Duration) *image.Store {
	t.Helper()
	s, err := image.New(image.Options{Dir: filepath.Join(t.TempDir(), "images"), ImageDir: imageDir,
		Keychain: authn.NewMultiKeychain(), StallTimeout: stall})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A layer that deletes a file and makes a directory opaque shows both as
// overlayfs does, and the layers below keep what they had.
func TestPullUnpacksLayersWithWhiteouts(t *testing.T) {
	upper := imagetest.Layer(t, imagetest.Entry{Name: "etc/.wh.group"}, imagetest.Entry{Name: "home/.wh..wh..opq"},
		imagetest.Entry{Name: "home/new", Body: "x"})
	img := imagetest.Busybox(t, func(c *v1.Config) { c.WorkingDir = "/home" }, upper)
	host := imagetest.Registry(t, nil)
	imagetest.Push(t, host+"/tools/busybox:1", img)

	s := newStore(t, "")
	got, err := s.Resolve(context.Background(), host+"/tools/busybox:1", nil, image.Platform{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Layers) != 2 || got.Config.WorkingDir != "/home" || !strings.HasPrefix(got.Digest, "sha256:") {
		t.Fatalf("image = %+v", got)
	}
	fi, err := os.Lstat(filepath.Join(got.Layers[1], "etc", "group"))
	if err != nil || !image.IsWhiteout(fi) {
		t.Errorf("etc/group in the top layer: %v %v, want a whiteout", fi, err)
	}
	if !image.IsOpaque(filepath.Join(got.Layers[1], "home")) {
		t.Error("home in the top layer is not opaque")
	}
	if b, err := os.ReadFile(filepath.Join(got.Layers[0], "etc", "group")); err != nil || !strings.Contains(string(b), "app:x:1000:") {
		t.Errorf("base layer etc/group = %q, %v", b, err)
	}
	if !slices.Contains(imagetest.Tree(t, got.Layers[0]), "bin/sh -> busybox") {
		t.Errorf("base layer: %v", imagetest.Tree(t, got.Layers[0]))
	}
}

// A multi-platform index is pulled as the platform asked for (the host's
// when none is), and each platform is cached apart.
func TestPullPicksThePlatform(t *testing.T) {
	mark := func(arch string) v1.Image {
		return imagetest.ForArch(t, imagetest.Busybox(t, nil, imagetest.Layer(t, imagetest.Entry{Name: "arch", Body: arch})), arch)
	}
	host := imagetest.Registry(t, nil)
	other := imagetest.OtherArch()
	imagetest.PushIndex(t, host+"/multi:1", mark(other), mark(runtime.GOARCH))
	s := newStore(t, "")
	for _, p := range []image.Platform{{}, {OS: "linux", Arch: other}, {OS: "linux", Arch: runtime.GOARCH}} {
		got, err := s.Resolve(context.Background(), host+"/multi:1", nil, p)
		if err != nil {
			t.Fatal(err)
		}
		want := p.Arch
		if want == "" {
			want = runtime.GOARCH
		}
		if b, err := os.ReadFile(filepath.Join(got.Layers[1], "arch")); string(b) != want {
			t.Errorf("platform %+v: got the %q image (%v)", p, b, err)
		}
	}
	// An index without the platform names what it has.
	imagetest.PushIndex(t, host+"/one:1", mark(other))
	_, err := s.Resolve(context.Background(), host+"/one:1", nil, image.Platform{})
	if err == nil || !strings.Contains(err.Error(), "no child with platform linux/"+runtime.GOARCH) {
		t.Errorf("missing platform: %v", err)
	}
}

// The second resolve of a reference needs no registry.
func TestResolveUsesTheCache(t *testing.T) {
	img := imagetest.Busybox(t, nil)
	var pulls int
	host := imagetest.Registry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodGet {
				pulls++
			}
			h.ServeHTTP(w, r)
		})
	})
	imagetest.Push(t, host+"/bb:latest", img)
	pulls = 0
	s := newStore(t, "")
	first, err := s.Resolve(context.Background(), host+"/bb", nil, image.Platform{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Resolve(context.Background(), host+"/bb:latest", nil, image.Platform{})
	if err != nil {
		t.Fatal(err)
	}
	if pulls != 1 || first.Digest != second.Digest || !slices.Equal(first.Layers, second.Layers) {
		t.Errorf("pulls = %d, first %+v, second %+v", pulls, first, second)
	}
}

// A registry that wants credentials gets those of the request, and a pull
// without them fails with its answer.
func TestPullWithAuth(t *testing.T) {
	img := imagetest.Busybox(t, nil)
	host := imagetest.Registry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "ci" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	imagetest.Push(t, host+"/private/app:1", img, remote.WithAuth(&authn.Basic{Username: "ci", Password: "s3cret"}))
	s := newStore(t, "")
	_, err := s.Resolve(context.Background(), host+"/private/app:1", nil, image.Platform{})
	if err == nil || !strings.Contains(err.Error(), "UNAUTHORIZED") {
		t.Fatalf("without credentials: %v, want the registry's UNAUTHORIZED", err)
	}
	if _, err := s.Resolve(context.Background(), host+"/private/app:1", &image.Auth{Username: "ci", Password: "s3cret"}, image.Platform{}); err != nil {
		t.Fatalf("with credentials: %v", err)
	}
}

// A registry that never answers ends the pull after StallTimeout.
func TestPullFromStalledRegistryEnds(t *testing.T) {
	release := make(chan struct{})
	host := imagetest.Registry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
	})
	defer close(release)
	s := storeWithStall(t, "", time.Second)
	_, err := s.Resolve(context.Background(), host+"/slow:1", nil, image.Platform{})
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

func TestBadReferences(t *testing.T) {
	s := newStore(t, "")
	if _, err := s.Resolve(context.Background(), "Not A Ref", nil, image.Platform{}); err == nil ||
		!strings.Contains(err.Error(), "could not parse reference") {
		t.Errorf("unparsable: %v", err)
	}
	host := imagetest.Registry(t, nil)
	_, err := s.Resolve(context.Background(), host+"/missing:1", nil, image.Platform{})
	if err == nil || !strings.Contains(err.Error(), "NAME_UNKNOWN") {
		t.Errorf("missing: %v", err)
	}
	_, err = s.Resolve(context.Background(), "127.0.0.1:1/nothing:1", nil, image.Platform{})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("no registry listening: %v", err)
	}
}

// Images of --image-dir (an OCI layout, a docker-save tarball) are found by
// their names, and no registry is asked.
func TestImageDir(t *testing.T) {
	dir := t.TempDir()
	imagetest.WriteLayout(t, filepath.Join(dir, "tools"), "1.0", imagetest.Busybox(t, func(c *v1.Config) { c.User = "app" }))
	imagetest.WriteTarball(t, filepath.Join(dir, "saved.tar"), "example.com/team/saved:2", imagetest.Busybox(t, nil))
	s := newStore(t, dir)
	names := s.Names()
	slices.Sort(names)
	want := []string{"example.com/team/saved:2", "index.docker.io/library/tools:1.0"}
	if !slices.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	img, err := s.Resolve(context.Background(), "tools:1.0", nil, image.Platform{})
	if err != nil {
		t.Fatal(err)
	}
	uid, gid, err := img.User()
	if err != nil || uid != 1000 || gid != 1000 {
		t.Errorf("User() = %d, %d, %v; want 1000, 1000", uid, gid, err)
	}
	if _, err := s.Resolve(context.Background(), "example.com/team/saved:2", nil, image.Platform{}); err != nil {
		t.Fatal(err)
	}
}

// Without image.auth, the credentials of the Docker config (DOCKER_CONFIG,
// else ~/.docker/config.json) are used, as `docker pull` uses them.
func TestPullWithDockerConfigCredentials(t *testing.T) {
	img := imagetest.Busybox(t, nil)
	host := imagetest.Registry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "robot" || p != "from-config" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	imagetest.Push(t, host+"/team/app:1", img, remote.WithAuth(&authn.Basic{Username: "robot", Password: "from-config"}))
	cfg := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("robot:from-config"))
	if err := os.WriteFile(filepath.Join(cfg, "config.json"), []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfg)
	s, err := image.New(image.Options{Dir: filepath.Join(t.TempDir(), "images")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(context.Background(), host+"/team/app:1", nil, image.Platform{}); err != nil {
		t.Fatalf("with the Docker config's credentials: %v", err)
	}
}
