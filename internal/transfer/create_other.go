//go:build !unix

package transfer

import "os"

// createFile creates (or truncates) a file for writing.
func createFile(name string) (*os.File, error) { return os.Create(name) }

// createNew is createFile for a file that must not exist yet.
func createNew(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
}

func rename(oldname, newname string) error { return os.Rename(oldname, newname) }
