package transfer

import (
	"os"
	"path/filepath"
	"testing"
)

// A staged tree is out of sight until Close puts it at its target in
// one go; a file given up is removed from it; a name written twice holds
// the second; nothing of the staging is left.
func TestTreeStagePublishesWholeFiles(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "copy")
	ts, err := NewTreeStage(target)
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel, text string, commit bool) {
		d, err := ts.Open(filepath.Join(ts.Root(), rel))
		if err != nil {
			t.Fatal(err)
		}
		d.Write([]byte(text))
		if !commit {
			d.Abort()
			return
		}
		d.SetMode(0o640)
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(ts.Root(), "sub"), 0o755)
	write("sub/a.txt", "first", true)
	write("sub/a.txt", "second", true)
	write("cut.txt", "part of", false)
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("%s is there before Close (%v)", target, err)
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(target, "sub/a.txt")); string(got) != "second" {
		t.Errorf("sub/a.txt holds %q, want the second copy", got)
	}
	if fi, err := os.Stat(filepath.Join(target, "sub/a.txt")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("sub/a.txt: %v, want mode 0640", err)
	}
	if _, err := os.Lstat(filepath.Join(target, "cut.txt")); !os.IsNotExist(err) {
		t.Errorf("the file given up is in the tree (%v)", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 || entries[0].Name() != "copy" {
		t.Errorf("%s holds %v, want only copy", parent, entries)
	}
}

// A tree that cannot take its place (something filled the target while it
// was built) is not merged into it: Close fails, and leaves nothing of
// the staging.
func TestTreeStageDoesNotMergeIntoATarget(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "copy")
	ts, err := NewTreeStage(target)
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(target, 0o755)
	os.WriteFile(filepath.Join(target, "mine.txt"), []byte("mine"), 0o644)
	if err := ts.Close(); err == nil {
		t.Fatal("Close over a directory that is not empty succeeded")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 || entries[0].Name() != "copy" {
		t.Errorf("%s holds %v, want only copy", parent, entries)
	}
	if got, _ := os.ReadFile(filepath.Join(target, "mine.txt")); string(got) != "mine" {
		t.Errorf("mine.txt holds %q", got)
	}
}
