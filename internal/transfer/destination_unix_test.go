//go:build unix

package transfer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Named pipes exist on Unix systems only.
func TestSpecialFilesAreWrittenDirectly(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	link := filepath.Join(dir, "fifo-link")
	os.Symlink(fifo, link)
	d, err := Open(link, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d, "through the pipe")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("fifo got %q", s)
	}
	if d.Stdout || len(staging(t, dir)) != 0 {
		t.Errorf("a FIFO was staged or taken for stdout")
	}

	d, err = Open(os.DevNull, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d, "gone")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(os.DevNull); fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s was replaced", os.DevNull)
	}
}

// A download cleans up, in the directory it writes to, the staging
// directories that killed downloads left: those of a process that is gone
// or untouched for a day. What may be a live download, or may not be
// osb's, stays.
func TestStaleStagingIsCleanedUp(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stage := func(name string, files ...string) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			os.WriteFile(filepath.Join(p, f), []byte("half a file"), 0o600)
		}
		return p
	}
	old := func(p string) {
		long := time.Now().Add(-25 * time.Hour)
		filepath.WalkDir(p, func(q string, _ fs.DirEntry, _ error) error { return os.Chtimes(q, long, long) })
	}
	deadPID := stage(fmt.Sprintf("%s%d-111", StagePrefix, gone.Process.Pid), "download")
	deadEmpty := stage(fmt.Sprintf("%s%d-112", StagePrefix, gone.Process.Pid))
	deadShared := stage(fmt.Sprintf("%s%d-113", StagePrefix, gone.Process.Pid), "1", "2", "17")
	oldFormat := stage(StagePrefix+"333", "download")
	old(oldFormat)
	livePID := stage(fmt.Sprintf("%s%d-444", StagePrefix, os.Getppid()), "download")
	recentOldFormat := stage(StagePrefix+"555", "download")
	notOurs := stage(fmt.Sprintf("%s%d-666", StagePrefix, gone.Process.Pid), "download", "notes.txt")
	old(notOurs)
	plainFile := filepath.Join(dir, StagePrefix+"777")
	os.WriteFile(plainFile, nil, 0o600)
	tree := func(name string) string {
		p := stage(name)
		os.MkdirAll(filepath.Join(p, treeEntry, "deep"), 0o700)
		os.WriteFile(filepath.Join(p, treeEntry, "deep", "f"), []byte("half a file"), 0o600)
		return p
	}
	deadTree := tree(fmt.Sprintf("%s%d-888", StagePrefix, gone.Process.Pid))
	// Files deep in a tree may still be written when its top is old.
	oldLiveTree := tree(fmt.Sprintf("%s%d-999", StagePrefix, os.Getppid()))
	old(oldLiveTree)

	d, err := Open(filepath.Join(dir, "report.bin"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	for _, p := range []string{deadPID, deadEmpty, deadShared, oldFormat, deadTree} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there (%v)", filepath.Base(p), err)
		}
	}
	for _, p := range []string{livePID, recentOldFormat, notOurs, plainFile, oldLiveTree} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
	if !strings.HasPrefix(filepath.Base(d.stageDir), fmt.Sprintf("%s%d-", StagePrefix, os.Getpid())) {
		t.Errorf("staging directory %s does not carry osb's pid", d.stageDir)
	}
}
