// Package imagetest builds small OCI images in tests, from Debian's static
// busybox, and serves them from an in-process registry or writes them as
// OCI layouts and docker-save tarballs: image tests need no network.
package imagetest

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// BusyboxPath is Debian's busybox-static.
const BusyboxPath = "/bin/busybox"

// Entry is one file of a layer. A Name ending in "/" is a directory;
// Link makes a symlink; a base name starting ".wh." is a whiteout.
type Entry struct {
	Name     string
	Body     string
	Link     string
	Mode     int64 // 0: 0644 for files, 0755 for directories
	UID, GID int
}

// Layer makes a layer of entries.
func Layer(t testing.TB, entries ...Entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: e.Mode, Uid: e.UID, Gid: e.GID}
		switch {
		case strings.HasSuffix(e.Name, "/"):
			h.Typeflag = tar.TypeDir
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		case e.Link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.Link, 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Body))
			if h.Mode == 0 {
				h.Mode = 0o644
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, e.Body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// applets are the busybox programs the base layer links.
var applets = []string{"sh", "ls", "cat", "id", "pwd", "echo", "env", "touch", "mkdir", "rm", "tail", "sleep", "stat", "test", "ps", "mount", "wget", "nc", "chroot", "kill", "hostname", "grep", "head", "true"}

// Busybox is a base image: busybox as /bin/busybox with its usual
// applets linked in /bin, and /etc/passwd and /etc/group naming root and
// a user "app" (1000:1000). It skips the test where busybox-static is
// not installed. More layers go on top, and cfg (may be nil) edits the
// configuration.
func Busybox(t testing.TB, cfg func(*v1.Config), more ...v1.Layer) v1.Image {
	t.Helper()
	bin := StaticBusybox(t)
	entries := []Entry{{Name: "bin/"}, {Name: "bin/busybox", Body: string(bin), Mode: 0o755}, {Name: "etc/"},
		{Name: "etc/passwd", Body: "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/sh\n"},
		{Name: "etc/group", Body: "root:x:0:\napp:x:1000:\n"},
		{Name: "home/"}, {Name: "home/app/", UID: 1000, GID: 1000}}
	for _, a := range applets {
		entries = append(entries, Entry{Name: "bin/" + a, Link: "busybox"})
	}
	img, err := mutate.AppendLayers(empty.Image, append([]v1.Layer{Layer(t, entries...)}, more...)...)
	if err != nil {
		t.Fatal(err)
	}
	c := v1.Config{Env: []string{"PATH=/bin"}}
	if cfg != nil {
		cfg(&c)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config, cf.OS, cf.Architecture = c, "linux", runtimeArch()
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Registry is an in-process registry; wrap (may be nil) sees every
// request first, to demand credentials or stall. It returns the host:port.
func Registry(t testing.TB, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(nopLogger()))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// OtherArch is an architecture of the API's (amd64, arm64) that this
// host is not.
func OtherArch() string {
	if runtime.GOARCH == "arm64" {
		return "amd64"
	}
	return "arm64"
}

// ForArch is img with its configuration saying it is built for arch.
func ForArch(t testing.TB, img v1.Image, arch string) v1.Image {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// PushIndex stores at ref a multi-platform index of imgs, each under
// the platform its configuration names.
func PushIndex(t testing.TB, ref string, imgs ...v1.Image) {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture}}})
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(r, mutate.AppendManifests(empty.Index, adds...)); err != nil {
		t.Fatal(err)
	}
}

// Push stores img in the registry at ref (host:port/repo:tag).
func Push(t testing.TB, ref string, img v1.Image, opts ...remote.Option) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img, opts...); err != nil {
		t.Fatal(err)
	}
}

// WriteLayout writes img as an OCI layout at dir, named ref in its index.
func WriteLayout(t testing.TB, dir, ref string, img v1.Image) {
	t.Helper()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		t.Fatal(err)
	}
}

// WriteTarball writes img as `docker save` does, tagged ref.
func WriteTarball(t testing.TB, file, ref string, img v1.Image) {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := tarball.WriteToFile(file, tag, img); err != nil {
		t.Fatal(err)
	}
}

// Tree lists the files under dir as "path" or "path -> target", sorted.
func Tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			rel += " -> " + target
		}
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out
}

func runtimeArch() string { return runtime.GOARCH }

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }

// StaticBusybox is the static busybox program; it skips the test where
// Debian's busybox-static is not installed.
func StaticBusybox(t testing.TB) []byte {
	t.Helper()
	bin, err := os.ReadFile(BusyboxPath)
	if err != nil {
		t.Skipf("no %s (Debian's busybox-static): %v", BusyboxPath, err)
	}
	if !static(bin) {
		t.Skipf("%s is linked dynamically; the image tests need Debian's busybox-static", BusyboxPath)
	}
	return bin
}

// static tells whether an ELF program needs no dynamic loader.
func static(bin []byte) bool {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return false
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}
