//go:build !unix

// Package umask sets the process's file mode creation mask where the system
// has one, so tests can check exact modes of the files osb creates.
package umask

// Set does nothing where there is no umask, and reports none.
func Set(int) int { return 0 }
