//go:build linux

package sandbox

import (
	"context"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/osb-dev/osb/internal/server/image"
	"github.com/osb-dev/osb/internal/server/image/imagetest"
)

// An image root is the same whether the kernel mounts the overlay or the
// layers are copied into the sandbox (where it refuses): the upper layer's
// files, its whiteout and opaque directory applied, and writable.
func TestImageRootOverlayAndCopied(t *testing.T) {
	needIsolation(t)
	upper := imagetest.Layer(t, imagetest.Entry{Name: "etc/motd", Body: "top\n"}, imagetest.Entry{Name: "etc/.wh.group"},
		imagetest.Entry{Name: "home/.wh..wh..opq"}, imagetest.Entry{Name: "home/new/"})
	layers := imageLayers(t, upper)
	const script = `cat /etc/motd; test -e /etc/group || echo no-group; ls /home; echo w > /etc/written && cat /etc/written; id -u`
	const want = "top\nno-group\nnew\nw\n0\n"
	for _, copied := range []bool{false, true} {
		overlayRefused.Store(copied)
		s, err := New(Config{ID: randomID(t), Dir: filepath.Join(t.TempDir(), "sb"), Isolated: true, Rootfs: &Rootfs{Layers: layers}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start([]string{"sleep", "1000"}); err != nil {
			t.Fatal(err)
		}
		if s.copied != copied {
			t.Errorf("copied = %v, want %v", s.copied, copied)
		}
		if got := run(t, s, CommandSpec{Argv: []string{"/bin/sh", "-c", script}}); got != want {
			t.Errorf("copied %v: %q, want %q", copied, got, want)
		}
		s.Remove()
	}
	overlayRefused.Store(false)
}

// imageLayers unpacks busybox with more layers on top, as the server's
// image store does, and returns the layers, lowest first.
func imageLayers(t *testing.T, more ...v1.Layer) []string {
	t.Helper()
	dir := t.TempDir()
	imagetest.WriteLayout(t, filepath.Join(dir, "bb"), "1", imagetest.Busybox(t, nil, more...))
	st, err := image.New(image.Options{Dir: filepath.Join(t.TempDir(), "cache"), ImageDir: dir, Owner: ImageOwner})
	if err != nil {
		t.Fatal(err)
	}
	img, err := st.Resolve(context.Background(), "bb:1", nil, image.Platform{})
	if err != nil {
		t.Fatal(err)
	}
	return img.Layers
}
