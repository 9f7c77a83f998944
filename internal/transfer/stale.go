package transfer

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// staleAfter is how long a staging directory may sit unchanged before it
// counts as left behind whatever its name says: a live download writes to
// it all the time (and gives up after its idle timeout when it cannot).
const staleAfter = 24 * time.Hour

// stageName is the MkdirTemp pattern of a staging directory: the prefix,
// then osb's process id, so that a later download can tell whether the
// download that made it is still running.
func stageName() string {
	return StagePrefix + strconv.Itoa(os.Getpid()) + "-*"
}

// removeStale removes the staging directories in dir that a download
// killed before it could clean up (SIGKILL, a crash, a power cut) left
// behind. Only what is certainly ours and certainly abandoned goes: a
// directory named like one, owned by this user, holding nothing but
// staged files (or a staged tree), and either made by a process that is
// gone or, files only, untouched for staleAfter. Anything else, and any error, leaves it alone.
func removeStale(dir string) {
	// Once per directory and run: osb cp may download thousands of files
	// into one directory, and reading it again for each would cost more
	// than the copies.
	if _, done := cleaned.LoadOrStore(dir, true); done {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), StagePrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if abandoned(path, e.Name()) {
			os.RemoveAll(path)
		}
	}
}

// cleaned holds the directories removeStale has looked at in this run.
var cleaned sync.Map

// abandoned reports whether the staging directory at path is left over.
func abandoned(path, name string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || !ownedByMe(fi) {
		return false
	}
	latest := fi.ModTime()
	inside, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	tree := false
	for _, e := range inside {
		staged, err := e.Info()
		if err != nil || !stagedEntry(e.Name(), staged) {
			return false
		}
		latest = maxTime(latest, staged.ModTime())
		tree = tree || staged.IsDir()
	}
	// A tree's own time says nothing of the files written deep in it.
	if !tree && time.Since(latest) > staleAfter {
		return true
	}
	pid, ok := stagePID(name)
	return ok && pid != os.Getpid() && !processAlive(pid)
}

// stagedEntry reports whether an entry of a staging directory is one a
// download makes there: a file named "download" in a file's own staging
// directory, or a number in a copy's shared one; or a staged tree.
func stagedEntry(name string, fi fs.FileInfo) bool {
	if fi.IsDir() {
		return name == treeEntry
	}
	if !fi.Mode().IsRegular() {
		return false
	}
	if name == "download" {
		return true
	}
	_, err := strconv.ParseUint(name, 10, 64)
	return err == nil
}

// stagePID reads the process id out of a staging directory's name; names
// from before osb put it there have none.
func stagePID(name string) (int, bool) {
	digits, _, ok := strings.Cut(strings.TrimPrefix(name, StagePrefix), "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
