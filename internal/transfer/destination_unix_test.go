//go:build unix

package transfer

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
