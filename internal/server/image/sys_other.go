//go:build !linux

package image

import (
	"errors"
	"os"
)

var errNotLinux = errors.New("image layers are unpacked on Linux only")

// Whiteout marks name deleted (Linux only).
func Whiteout(*os.Root, string) error                 { return errNotLinux }
func setXattr(*os.Root, string, string, string) error { return errNotLinux }

// IsWhiteout tells whether fi is an overlayfs whiteout.
func IsWhiteout(os.FileInfo) bool { return false }

// MarkOpaque makes a directory hide its lower layers' entries (Linux only).
func MarkOpaque(*os.Root, string) error { return errNotLinux }

// OpenedOpaque is IsOpaque of an opened directory.
func OpenedOpaque(*os.File) bool { return false }

// IsOpaque tells whether the directory at p hides its lower layers.
func IsOpaque(string) bool { return false }
