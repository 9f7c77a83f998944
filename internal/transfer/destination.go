// Package transfer moves file contents between osb and a sandbox without
// holding them in memory: where a download lands (and how an existing file
// is replaced only once the download is complete), the byte-count check, and
// the progress display.
package transfer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// StagePrefix names the hidden directory a download is staged in, next to
// the file it will replace.
const StagePrefix = ".osb-download-"

// Destination is where a download goes. It is prepared before any request,
// so that a destination that cannot be written fails without one. Write the
// bytes to it, then Commit on success or Abort on failure.
type Destination struct {
	// Stdout is true when the bytes go to osb's own standard output; the
	// caller then prints nothing else there.
	Stdout bool

	w        io.Writer
	file     *os.File    // the special file, or the staged file
	staged   string      // the staged file; "" unless staging
	stageDir string      // the staging directory of this file alone; "" when shared or not staging
	target   string      // the file a staged download replaces
	placed   string      // a file of a staged tree, written in place: removed by Abort
	oldMode  fs.FileMode // the replaced file's permission bits
	replaces bool        // target existed
	mode     fs.FileMode // set by SetMode: the bits the file gets
	modeSet  bool
}

// SetMode gives the file these permission bits when Commit puts it in
// place, instead of the replaced file's or the default for new files.
func (d *Destination) SetMode(perm fs.FileMode) { d.mode, d.modeSet = perm.Perm(), true }

// Open prepares the download destination named by path ("-" is stdout).
// It creates the missing parent directories, then:
//   - a path that is osb's stdout (/dev/stdout, /dev/fd/1, a symlink to
//     them, or the very file or pipe stdout is) gets the bytes directly;
//   - a directory is an error;
//   - other non-regular files (FIFOs, devices) are written directly;
//   - a regular or missing file is staged in a hidden directory beside it
//     and renamed over it by Commit (an existing file must be writable now,
//     and keeps its permission bits).
func Open(path string, stdout io.Writer) (*Destination, error) {
	if path == "-" {
		return &Destination{Stdout: true, w: stdout}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	switch {
	case fi != nil && isStdout(path, fi, stdout):
		return &Destination{Stdout: true, w: stdout}, nil
	case fi != nil && fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory", path)
	case fi != nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &Destination{w: f, file: f}, nil
	}
	return stage(path, fi)
}

// stage prepares the staged download of a regular file (fi nil: missing)
// in a staging directory of its own.
func stage(path string, fi fs.FileInfo) (*Destination, error) {
	target, err := resolveLinks(path)
	if err != nil {
		return nil, err
	}
	d, err := prepare(target, fi)
	if err != nil {
		return nil, err
	}
	removeStale(filepath.Dir(d.target))
	d.stageDir, err = os.MkdirTemp(filepath.Dir(d.target), stageName())
	if err != nil {
		return nil, err
	}
	d.staged = filepath.Join(d.stageDir, "download")
	if err := d.create(); err != nil {
		return nil, err
	}
	return d, nil
}

// prepare is the staged download that replaces target (fi: the file there,
// nil when none), checking now, before anything is downloaded, that an
// existing file can be replaced.
func prepare(target string, fi fs.FileInfo) (*Destination, error) {
	d := &Destination{target: target}
	if fi != nil {
		// Opening without O_TRUNC leaves it as it is.
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		f.Close()
		d.replaces, d.oldMode = true, fi.Mode().Perm()
	}
	return d, nil
}

// create makes the staged file, like any new file: 0666 less the umask.
func (d *Destination) create() error {
	f, err := createFile(d.staged)
	if err != nil {
		d.Abort()
		return err
	}
	d.file, d.w = f, f
	return nil
}

// resolveLinks follows symlinks in path, including a final one whose target
// does not exist yet, so the download replaces the file the link points to
// rather than the link.
func resolveLinks(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			dir, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return "", err
			}
			return filepath.Join(dir, filepath.Base(path)), nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// stdoutNames are the names of "my standard output" on Linux.
var stdoutNames = map[string]bool{"/dev/stdout": true, "/dev/fd/1": true, "/proc/self/fd/1": true}

// isStdout reports whether the file at path (fi, symlinks followed) is
// where stdout writes.
func isStdout(path string, fi fs.FileInfo, stdout io.Writer) bool {
	if f, ok := stdout.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if ofi, err := f.Stat(); err == nil {
			return os.SameFile(fi, ofi)
		}
	}
	// stdout is not a file (osb run in-process): only its names count.
	target, err := filepath.EvalSymlinks(path)
	return stdoutNames[filepath.Clean(path)] || (err == nil && stdoutNames[target])
}

// Write writes downloaded bytes.
func (d *Destination) Write(p []byte) (int, error) { return d.w.Write(p) }

// Commit finishes a complete download: a staged file takes the place of
// the target (with the replaced file's permission bits) in one rename.
func (d *Destination) Commit() error {
	if d.file == nil {
		return nil
	}
	if d.staged == "" && d.placed == "" {
		err := d.file.Close()
		d.file = nil
		return err
	}
	defer d.Abort()
	var err error
	switch {
	case d.modeSet:
		err = d.file.Chmod(d.mode)
	case d.replaces:
		err = d.file.Chmod(d.oldMode)
	}
	if cerr := d.file.Close(); err == nil {
		err = cerr
	}
	d.file = nil
	if err == nil && d.staged != "" {
		err = rename(d.staged, d.target)
	}
	if err == nil {
		d.staged, d.placed = "", ""
	}
	return err
}

// Abort gives up: the staged file is removed and the target is untouched.
// Safe to call after Commit, and more than once.
func (d *Destination) Abort() {
	if d.file != nil {
		d.file.Close()
		d.file = nil
	}
	switch {
	case d.stageDir != "":
		os.RemoveAll(d.stageDir)
		d.stageDir = ""
	case d.staged != "":
		os.Remove(d.staged)
	case d.placed != "":
		os.Remove(d.placed)
	}
	d.staged, d.placed = "", ""
}

// IntoDir is where a download named name lands when asked to go to local:
// inside it when local is an existing directory (as cp does), local itself
// otherwise. A local ending in a separator must be an existing directory.
func IntoDir(local, name string) (string, error) {
	if local == "-" {
		return local, nil
	}
	fi, err := os.Stat(local)
	switch {
	case err == nil && fi.IsDir():
		if name == "" || name == "/" || name == "." || name == ".." {
			return "", fmt.Errorf("%s: is a directory, and the remote path names no file to save in it", local)
		}
		return filepath.Join(local, name), nil
	case endsInSeparator(local):
		return "", fmt.Errorf("%s: no such directory", local)
	}
	return local, nil
}

func endsInSeparator(p string) bool {
	return p != "" && os.IsPathSeparator(p[len(p)-1])
}
