//go:build !unix

package transfer

import "os"

// createFile creates (or truncates) a file for writing.
func createFile(name string) (*os.File, error) { return os.Create(name) }
