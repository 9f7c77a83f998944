package image

import (
	"os"
	"path"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Whiteout marks name deleted: overlayfs's whiteout, a character device
// 0/0, which the kernel lets anyone create.
func Whiteout(root *os.Root, name string) error {
	d, err := root.Open(path.Dir(name))
	if err != nil {
		return err
	}
	defer d.Close()
	base := path.Base(name)
	unix.Unlinkat(int(d.Fd()), base, 0)
	return unix.Mknodat(int(d.Fd()), base, unix.S_IFCHR, 0)
}

func setXattr(root *os.Root, dir, attr, value string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Fsetxattr(int(d.Fd()), attr, []byte(value), 0)
}

// IsWhiteout tells whether fi is an overlayfs whiteout.
func IsWhiteout(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0 && st.Rdev == 0
}

// MarkOpaque makes the directory dir hide its lower layers' entries.
func MarkOpaque(root *os.Root, dir string) error { return setXattr(root, dir, OpaqueXattr, "y") }

// OpenedOpaque is IsOpaque of an opened directory.
func OpenedOpaque(d *os.File) bool {
	buf := make([]byte, 4)
	n, err := unix.Fgetxattr(int(d.Fd()), OpaqueXattr, buf)
	return err == nil && string(buf[:n]) == "y"
}

// IsOpaque tells whether the directory at p hides its lower layers.
func IsOpaque(p string) bool {
	buf := make([]byte, 4)
	n, err := unix.Lgetxattr(filepath.Clean(p), OpaqueXattr, buf)
	return err == nil && string(buf[:n]) == "y"
}
