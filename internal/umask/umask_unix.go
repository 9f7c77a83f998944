//go:build unix

// Package umask sets the process's file mode creation mask where the system
// has one, so tests can check exact modes of the files osb creates.
package umask

import "syscall"

// Set sets the mask and returns the previous one.
func Set(mask int) int { return syscall.Umask(mask) }
