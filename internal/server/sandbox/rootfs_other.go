//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

var errImagesLinux = errors.New("sandbox: images run on Linux only")

// OverlayRefused says whether an image's overlay was refused here.
func OverlayRefused() bool { return false }

func (s *Sandbox) startImage([]string, *os.File) (*anchor, error) { return nil, errImagesLinux }

func (s *Sandbox) rootfsSpec(func(string, string, bool, mountIDs) (bindSpec, error)) (*rootfsSpec, error) {
	return nil, errImagesLinux
}

// GiveToSandbox makes an opened directory the sandboxes' root's.
func GiveToSandbox(*os.File) error { return nil }

// ImageOwner is the owner on disk of an image file (unchanged here).
func ImageOwner(int, int) (int, int) { return -1, -1 }

func idmapOwners(*os.File) error { return nil }

func (s *Sandbox) WritableRoot() (string, bool, bool) { return "", false, false }

func (s *Sandbox) UpperDir() string { return "" }
