package image

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// localImage is one image of the image directory, opened when asked for.
type localImage struct {
	path string // the layout directory or tarball it comes from
	open func() (v1.Image, error)
}

// Annotations that name an image in an OCI layout's index.json: the OCI
// one (often a bare tag) and the one containerd and docker write.
const (
	annotationRefName       = "org.opencontainers.image.ref.name"
	annotationContainerName = "io.containerd.image.name"
)

// scanImageDir indexes the images of dir: each subdirectory holding an
// OCI layout (index.json), each *.tar written by `docker save`, and dir
// itself when it is a layout. An image is known by the reference its
// layout annotation or docker-save tag gives; a layout annotation that
// is only a tag names the image after its directory (busybox/ with
// ref.name "1.36" is busybox:1.36).
func scanImageDir(dir string) (map[string]localImage, error) {
	out := map[string]localImage{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err == nil {
		if err := addLayout(out, dir); err != nil {
			return nil, err
		}
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(p, "index.json")); err == nil {
				if err := addLayout(out, p); err != nil {
					return nil, err
				}
			}
		case strings.HasSuffix(e.Name(), ".tar"):
			if err := addTarball(out, p); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func addLayout(out map[string]localImage, dir string) error {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return err
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	for _, d := range m.Manifests {
		ref := d.Annotations[annotationContainerName]
		if ref == "" {
			ref = d.Annotations[annotationRefName]
		}
		if ref == "" {
			continue
		}
		if !strings.ContainsAny(ref, "/:@") {
			ref = filepath.Base(dir) + ":" + ref
		}
		r, err := name.ParseReference(ref)
		if err != nil {
			return fmt.Errorf("%s: image name %q: %w", dir, ref, err)
		}
		digest := d.Digest
		out[r.Name()] = localImage{path: filepath.Join(dir, "index.json"), open: func() (v1.Image, error) {
			if d.MediaType.IsIndex() {
				child, err := idx.ImageIndex(digest)
				if err != nil {
					return nil, err
				}
				return pickPlatform(child)
			}
			return idx.Image(digest)
		}}
	}
	return nil
}

// pickPlatform chooses this host's image from an index.
func pickPlatform(idx v1.ImageIndex) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	want := Platform{}.v1()
	for _, d := range m.Manifests {
		if d.Platform == nil || d.Platform.OS == want.OS && d.Platform.Architecture == want.Architecture {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("no image for %s/%s in the index", want.OS, want.Architecture)
}

func addTarball(out map[string]localImage, file string) error {
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(file) })
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, d := range m {
		for _, t := range d.RepoTags {
			tag, err := name.NewTag(t)
			if err != nil {
				return fmt.Errorf("%s: tag %q: %w", file, t, err)
			}
			out[tag.Name()] = localImage{path: file, open: func() (v1.Image, error) { return tarball.ImageFromPath(file, &tag) }}
		}
	}
	return nil
}
