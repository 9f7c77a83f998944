package transfer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files of one copy share one staging directory: each appears at its
// target only when committed, complete and with its mode; an aborted one
// leaves its target as it was; Close leaves nothing behind.
func TestStageSharedByFiles(t *testing.T) {
	root := t.TempDir()
	kept := filepath.Join(root, "kept.txt")
	os.WriteFile(kept, []byte("old"), 0o644)
	s, err := NewStage(root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(s.Dir()), StagePrefix) || filepath.Dir(s.Dir()) != root {
		t.Fatalf("staging directory %s is not a hidden one in %s", s.Dir(), root)
	}
	a, err := s.Open(filepath.Join(root, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Open(kept)
	if err != nil {
		t.Fatal(err)
	}
	a.SetMode(0o600)
	a.Write([]byte("new a"))
	b.Write([]byte("half"))
	if _, err := os.Lstat(filepath.Join(root, "a.txt")); err == nil {
		t.Error("a.txt is in place before it is committed")
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Abort()
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "new a" {
		t.Errorf("a.txt holds %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(root, "a.txt")); fi == nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a.txt has mode %v, want 0600", fi.Mode())
	}
	if got, _ := os.ReadFile(kept); string(got) != "old" {
		t.Errorf("the aborted download changed kept.txt to %q", got)
	}
	if left, _ := os.ReadDir(s.Dir()); len(left) != 0 {
		t.Errorf("staged files left in the shared directory: %v", left)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(root, StagePrefix+"*")); len(m) != 0 {
		t.Errorf("staging left: %v", m)
	}
}
