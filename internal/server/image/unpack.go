package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// The OCI layer format marks deletions with whiteout files; overlayfs,
// which sandboxes stack layers with, wants its own marks instead.
const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
	// OpaqueXattr marks a directory whose lower layers' entries are
	// hidden, for an overlay mounted with userxattr (inside a user
	// namespace, where trusted.* attributes are out of reach).
	OpaqueXattr = "user.overlay.opaque"
)

// unpackTar writes a layer's entries under dir (a fresh directory),
// through an os.Root so that no entry, not even through a symlink an
// earlier entry made, lands outside it.
func unpackTar(r io.Reader, dir string, owner func(uid, gid int) (int, int)) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)[1:]
		if name == "" {
			continue
		}
		if err := unpackEntry(root, tr, h, name, owner); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}

func unpackEntry(root *os.Root, tr *tar.Reader, h *tar.Header, name string, owner func(uid, gid int) (int, int)) error {
	parent, base := path.Dir(name), path.Base(name)
	if err := mkdirAllOwned(root, parent, owner); err != nil {
		return err
	}
	switch {
	case base == opaqueMarker:
		return setXattr(root, parent, OpaqueXattr, "y")
	case strings.HasPrefix(base, whiteoutPrefix):
		return Whiteout(root, path.Join(parent, strings.TrimPrefix(base, whiteoutPrefix)))
	}
	mode := os.FileMode(h.Mode).Perm()
	if h.Mode&0o4000 != 0 {
		mode |= os.ModeSetuid
	}
	if h.Mode&0o2000 != 0 {
		mode |= os.ModeSetgid
	}
	if h.Mode&0o1000 != 0 {
		mode |= os.ModeSticky
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if err := root.Mkdir(name, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	case tar.TypeReg:
		root.Remove(name)
		f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	case tar.TypeSymlink:
		root.Remove(name)
		if err := root.Symlink(h.Linkname, name); err != nil {
			return err
		}
		return chown(root, name, h, owner)
	case tar.TypeLink:
		root.Remove(name)
		return root.Link(path.Clean("/" + h.Linkname)[1:], name)
	default:
		// Device nodes and fifos: a user namespace could not use them.
		return nil
	}
	if err := chown(root, name, h, owner); err != nil {
		return err
	}
	return root.Chmod(name, mode)
}

func chown(root *os.Root, name string, h *tar.Header, owner func(uid, gid int) (int, int)) error {
	if owner == nil {
		return nil
	}
	uid, gid := owner(h.Uid, h.Gid)
	return root.Lchown(name, uid, gid)
}

// mkdirAllOwned makes the parents a layer does not list, owned by the
// image's root, as the runtime that built the layer had them.
func mkdirAllOwned(root *os.Root, dir string, owner func(uid, gid int) (int, int)) error {
	if dir == "." {
		return nil
	}
	if fi, err := root.Lstat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if err := mkdirAllOwned(root, path.Dir(dir), owner); err != nil {
		return err
	}
	if err := root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if owner != nil {
		uid, gid := owner(0, 0)
		return root.Lchown(dir, uid, gid)
	}
	return nil
}
