package sandbox

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// An image sandbox's root is an overlay mounted by its init, inside its
// user namespace: the image's layers (shared, read-only, unpacked once by
// package image) under an upper layer in the sandbox's own directory.
// Where the kernel refuses that overlay, the server copies the layers into
// the sandbox's directory instead (slower, more disk), and remembers to do
// so for the sandboxes after it.

// overlayRefusedMark starts the init's error when mounting the overlay failed.
const overlayRefusedMark = "overlay refused"

// overlayRefused is set once an overlay was refused here.
var overlayRefused atomic.Bool

// OverlayRefused says whether an image's overlay was refused here: image
// sandboxes then get copies of the layers, made at Start.
func OverlayRefused() bool { return overlayRefused.Load() }

// rootfsDir is the sandbox's writable layer (upper/, work/) or copied
// tree (tree/), relative to its Dir.
const rootfsDir = "rootfs"

// WritableRoot is where an image sandbox's own changes to its root are:
// the overlay's upper layer (overlayfs format: whiteouts and opaque
// directories), or, where the layers were copied, the whole root (full).
// ok is false for a sandbox on the host's programs.
func (s *Sandbox) WritableRoot() (dir string, full, ok bool) {
	if s.rootfs == nil {
		return "", false, false
	}
	if s.copied {
		return filepath.Join(s.dir, rootfsDir, "tree"), true, true
	}
	return s.UpperDir(), false, true
}

// UpperDir is an image sandbox's upper layer. What is there before Start
// (a restored snapshot's changes) is part of its root from the start, but
// for a sandbox prepared ahead (Prepare): its root is mounted already, and
// a change made beneath a mounted overlay is not one it is sure to show.
func (s *Sandbox) UpperDir() string { return filepath.Join(s.dir, rootfsDir, "upper") }

// rootfsSpec prepares the image's layers and the sandbox's own layer for
// the init; spec readies each to mount.
func (s *Sandbox) rootfsSpec(spec func(dir, target string, readOnly bool, kind mountIDs) (bindSpec, error)) (*rootfsSpec, error) {
	rs := &rootfsSpec{WorkDir: s.workDir, User: s.user, Copied: s.copied}
	var err error
	if rs.Upper, err = spec(filepath.Join(s.dir, rootfsDir), "", false, ownDir); err != nil {
		return nil, err
	}
	if s.copied {
		return rs, nil
	}
	for _, l := range s.rootfs.Layers {
		b, err := spec(l, "", true, sandboxIDs)
		if err != nil {
			return nil, err
		}
		rs.Layers = append(rs.Layers, b)
	}
	return rs, nil
}

// startImage starts an image sandbox's init, falling back to a copied root
// where the overlay is refused.
func (s *Sandbox) startImage(entrypoint []string, log *os.File) (*anchor, error) {
	if overlayRefused.Load() && !s.copied && s.launch == nil {
		if err := s.copyRoot(); err != nil {
			return nil, err
		}
	}
	a, err := startIsolated(s, entrypoint, log)
	if err == nil || s.copied || !strings.Contains(err.Error(), overlayRefusedMark) {
		return a, err
	}
	overlayRefused.Store(true)
	if s.cg != nil {
		s.cg.remove()
		s.cg = nil
	}
	fmt.Fprintf(log, "osb: %v; copying the image into the sandbox instead\n", err)
	if err := s.copyRoot(); err != nil {
		return nil, err
	}
	return startIsolated(s, entrypoint, log)
}

// copyRoot merges the image's layers into the sandbox's tree/.
func (s *Sandbox) copyRoot() error {
	dir := filepath.Join(s.dir, rootfsDir, "tree")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !rootless {
		if err := os.Lchown(dir, hostIDBase, hostIDBase); err != nil {
			return err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, l := range s.rootfs.Layers {
		if err := copyLayer(root, l); err != nil {
			return fmt.Errorf("copying image layer %s: %w", filepath.Base(l), err)
		}
	}
	// A restored snapshot's changes go on top, as the overlay would show them.
	if _, err := os.Lstat(s.UpperDir()); err == nil {
		if err := copyLayer(root, s.UpperDir()); err != nil {
			return fmt.Errorf("copying the snapshot's changes: %w", err)
		}
	}
	s.copied = true
	return nil
}

// copyLayer applies one layer (overlayfs format) to the tree in root:
// whiteouts delete, opaque directories replace, the rest is copied with
// its owner and mode. Through os.Root: a symlink of a lower layer never
// leads a write out of the tree.
func copyLayer(root *os.Root, layer string) error {
	return filepath.WalkDir(layer, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(layer, p)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode()&os.ModeCharDevice != 0 && st != nil && st.Rdev == 0:
			return root.RemoveAll(rel)
		case fi.IsDir():
			if opaque(p) {
				root.RemoveAll(rel)
			}
			if old, err := root.Lstat(rel); err == nil && !old.IsDir() {
				root.Remove(rel)
			}
			if err := root.Mkdir(rel, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			root.RemoveAll(rel)
			if err := root.Symlink(target, rel); err != nil {
				return err
			}
			return root.Lchown(rel, int(st.Uid), int(st.Gid))
		case fi.Mode().IsRegular():
			root.RemoveAll(rel)
			if err := copyInto(root, rel, p); err != nil {
				return err
			}
		default:
			return nil
		}
		if err := root.Lchown(rel, int(st.Uid), int(st.Gid)); err != nil && !rootless {
			return err
		}
		return root.Chmod(rel, fi.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
	})
}

func copyInto(root *os.Root, rel, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := root.OpenFile(rel, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// opaque tells whether an overlayfs directory hides the layers below it.
func opaque(p string) bool {
	buf := make([]byte, 4)
	n, err := unix.Lgetxattr(p, "user.overlay.opaque", buf)
	return err == nil && string(buf[:n]) == "y"
}

// The init's side.

// mountImageRoot attaches the layers and the sandbox's own directory in
// the staging tmpfs r and returns where the image root is mounted.
func mountImageRoot(r string, rs *rootfsSpec) (string, error) {
	upper := filepath.Join(r, "u")
	if err := os.Mkdir(upper, 0o755); err != nil {
		return "", err
	}
	if err := attachBind(rs.Upper, upper); err != nil {
		return "", fmt.Errorf("sandbox layer: %w", err)
	}
	if rs.Upper.FD > 0 {
		unix.Close(rs.Upper.FD)
	}
	if rs.Copied {
		tree := filepath.Join(upper, "tree")
		// A bind of its own, so pivot_root has a mount to move to.
		return tree, unix.Mount(tree, tree, "", unix.MS_BIND, "")
	}
	var lower []string
	for i, l := range rs.Layers {
		dst := filepath.Join(r, "l", fmt.Sprint(i))
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return "", err
		}
		if err := attachBind(l, dst); err != nil {
			return "", fmt.Errorf("image layer %d: %w", i, err)
		}
		if l.FD > 0 {
			unix.Close(l.FD)
		}
		lower = append([]string{dst}, lower...) // overlayfs lists the top layer first
	}
	if len(lower) == 0 {
		empty := filepath.Join(r, "l", "empty")
		if err := os.MkdirAll(empty, 0o755); err != nil {
			return "", err
		}
		lower = []string{empty}
	}
	for _, d := range []string{"upper", "work"} {
		if err := os.MkdirAll(filepath.Join(upper, d), 0o755); err != nil {
			return "", err
		}
	}
	root := filepath.Join(r, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return "", err
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s,userxattr", strings.Join(lower, ":"),
		filepath.Join(upper, "upper"), filepath.Join(upper, "work"))
	if err := unix.Mount("overlay", root, "overlay", unix.MS_NODEV, opts); err != nil {
		return "", fmt.Errorf("%s: mount overlay: %w", overlayRefusedMark, err)
	}
	return root, nil
}

// dirIn makes sure name (relative) is a directory in the tree at r,
// resolved without leaving it (an image's symlinks point into the image,
// never at the host's tree the init still sees), and returns its real
// path for mount calls. Nothing else runs in the sandbox yet, so the path
// stays what it resolved to.
func dirIn(r, name string) (string, error) {
	root, err := os.OpenRoot(r)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if fi, err := root.Lstat(name); err == nil && !fi.IsDir() {
		if err := root.Remove(name); err != nil {
			return "", err
		}
	}
	if err := root.MkdirAll(name, 0o755); err != nil {
		return "", err
	}
	f, err := root.OpenFile(name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return "", err
	}
	if real != r && !strings.HasPrefix(real, r+"/") {
		return "", fmt.Errorf("%s resolves outside the sandbox root", name)
	}
	return real, nil
}

// makeImageMisc adds what a container runtime adds to an image's root:
// the working areas, and a private /run.
func makeImageMisc(r string, cfg initConfig) error {
	for _, d := range []string{"workspace", "tmp", "root", "etc"} {
		if _, err := dirIn(r, d); err != nil {
			return err
		}
	}
	if wd := cfg.Rootfs.WorkDir; wd != "" {
		if _, err := dirIn(r, strings.TrimPrefix(filepath.Clean(wd), "/")); err != nil {
			return fmt.Errorf("working directory %s: %w", wd, err)
		}
	}
	run, err := dirIn(r, "run")
	if err != nil {
		return err
	}
	if err := unix.Mount("osb-run", run, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
		return fmt.Errorf("/run: %w", err)
	}
	return nil
}

// makeImageEtc keeps the image's /etc (its users, its configuration) and
// writes what a container runtime writes there: the sandbox's name and
// hosts, and the resolver that says there is none (the CA bundle follows).
func makeImageEtc(r string, cfg initConfig) error {
	root, err := os.OpenRoot(r)
	if err != nil {
		return err
	}
	defer root.Close()
	h := cfg.Hostname
	files := map[string]string{
		"hostname":    h + "\n",
		"hosts":       "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t" + h + "\n",
		"resolv.conf": "# osb sandbox: no direct network; HTTP(S) goes through the proxy in HTTP_PROXY\nnameserver 127.0.0.1\n",
	}
	for name, content := range files {
		p := "etc/" + name
		root.RemoveAll(p) // a symlink in the image is replaced, not followed
		if err := root.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	// Whatever the image has there is replaced, not followed.
	root.RemoveAll(CABundle[1:])
	_, err = dirIn(r, filepath.Dir(CABundle)[1:])
	return err
}

// GiveToSandbox makes an opened directory (a named volume) the sandboxes'
// root's, as their own directories are.
func GiveToSandbox(dir *os.File) error {
	if rootless {
		return nil
	}
	return dir.Chown(hostIDBase, hostIDBase)
}

// ImageOwner is the owner on disk of an image file owned by uid and gid
// in its layer: shifted into the range sandboxes map (ids past it become
// nobody), or, rootless, the server's own (-1: unchanged), which is
// root in the sandbox.
func ImageOwner(uid, gid int) (int, int) {
	if rootless {
		return -1, -1
	}
	shift := func(id int) int {
		if id < 0 || id >= idCount {
			id = 65534
		}
		return hostIDBase + id
	}
	return shift(uid), shift(gid)
}

// hostLoader is set, in an image sandbox's init, when this program is
// linked dynamically (as test binaries built with the race detector
// are): the image has no libc of ours, so the agent is started through
// the host's dynamic loader, with the host's libraries shown read-only
// under hostLibDir.
var hostLoader *loaderSpec

type loaderSpec struct {
	path    string   // the loader, inside the sandbox
	libPath string   // --library-path for it
	exe     *os.File // this program, opened before pivot_root
}

const hostLibDir = "/run/osb-host"

// mountHostLoader shows the host's loader and libraries to the agent when
// this program needs them (see hostLoader).
func mountHostLoader(r string, _ initConfig) error {
	interp := programInterpreter()
	if interp == "" {
		return nil
	}
	realInterp, err := filepath.EvalSymlinks(interp)
	if err != nil {
		return fmt.Errorf("dynamic loader %s: %w", interp, err)
	}
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	libs, err := filepath.EvalSymlinks("/usr/lib")
	if err != nil {
		return err
	}
	dirs := []string{libs}
	if d := filepath.Dir(realInterp); !strings.HasPrefix(d, libs+"/") {
		dirs = append(dirs, d)
	}
	var libPath []string
	for i, d := range dirs {
		dst := filepath.Join(r, hostLibDir, fmt.Sprint(i))
		if err := bindRO(d, dst); err != nil {
			return err
		}
		inside := filepath.Join(hostLibDir, fmt.Sprint(i))
		multiarch, _ := filepath.Glob(filepath.Join(d, "*-linux-*"))
		for _, m := range multiarch {
			libPath = append(libPath, filepath.Join(inside, filepath.Base(m)))
		}
		libPath = append(libPath, inside)
		if rel, err := filepath.Rel(d, realInterp); err == nil && !strings.HasPrefix(rel, "..") {
			hostLoader = &loaderSpec{path: filepath.Join(inside, rel), exe: exe}
		}
	}
	if hostLoader == nil {
		return fmt.Errorf("dynamic loader %s not found under %v", realInterp, dirs)
	}
	hostLoader.libPath = strings.Join(libPath, ":")
	return nil
}

// programInterpreter is the ELF interpreter this program asks for, or ""
// for a static one.
func programInterpreter() string {
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return ""
			}
			return strings.TrimRight(string(b), "\x00")
		}
	}
	return ""
}

// idmapThroughInit makes the detached mounts show host id N as the
// sandbox's id N, through the user namespace of its (still waiting) init,
// so that root in the sandbox owns what host root owns there, as in a
// container's bind mount. Where a filesystem cannot be idmapped, the
// mount stays as it is: its files then show as nobody's.
func idmapThroughInit(pid int, mnts []*os.File) error {
	if len(mnts) == 0 {
		return nil
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", pid))
	if err != nil {
		return err
	}
	defer ns.Close()
	for _, m := range mnts {
		if err := idmap(m, ns); err != nil && !errors.Is(err, errNoIdmap) {
			return err
		}
	}
	return nil
}
