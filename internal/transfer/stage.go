package transfer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// Stage is one staging directory shared by every file of one copy: each
// file is still written in full before it is renamed into place, but the
// copy pays for one hidden directory, not one a file. Open is safe to call
// from several goroutines.
type Stage struct {
	root, dir string
	next      atomic.Int64
}

// NewStage makes the staging directory inside root, an existing directory
// the files will be renamed into, so that the renames stay on one
// filesystem. Close removes it.
func NewStage(root string) (*Stage, error) {
	removeStale(root)
	dir, err := os.MkdirTemp(root, stageName())
	if err != nil {
		return nil, err
	}
	return &Stage{root: root, dir: dir}, nil
}

// Dir is the staging directory, to leave out of what the copy reports.
func (s *Stage) Dir() string { return s.dir }

// Open prepares the staged download of the file at path, whose directory
// the caller has checked: like Open, with the file staged in s, except that
// a symlink at path is replaced by the file, never followed. A path naming
// anything other than a regular file, a symlink or nothing is opened as
// Open opens it.
func (s *Stage) Open(path string) (*Destination, error) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err != nil, fi.Mode()&fs.ModeSymlink != 0:
		fi = nil // nothing there, or a link the rename replaces
	case !fi.Mode().IsRegular():
		return Open(path, nil)
	}
	d, err := prepare(path, fi)
	if err != nil {
		return nil, err
	}
	d.staged = filepath.Join(s.dir, strconv.FormatInt(s.next.Add(1), 10))
	if err := d.create(); err != nil {
		return nil, err
	}
	return d, nil
}

// Close removes the staging directory and whatever an aborted file left in it.
func (s *Stage) Close() error { return os.RemoveAll(s.dir) }

// Root is the directory the files go to.
func (s *Stage) Root() string { return s.root }
