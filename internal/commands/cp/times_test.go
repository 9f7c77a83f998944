package cp_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// stamped is a tree whose modes a umask would change (0775, 0666) or a
// directory map made in another order would lose (several 0700
// directories, each with a 0755 child), every path with a time of its own
// in the past.
var stamped = map[string]node{
	"build.sh":   {mode: 0o775, content: "#!/bin/sh\n"},
	"shared.txt": {mode: 0o666, content: "shared\n"},
	"src":        {mode: fs.ModeDir | 0o755},
	"src/main.c": {mode: 0o644, content: "int main(){}\n"},
}

func init() {
	for i := range 6 {
		stamped[fmt.Sprintf("private%d", i)] = node{mode: fs.ModeDir | 0o700}
		stamped[fmt.Sprintf("private%d/open", i)] = node{mode: fs.ModeDir | 0o755}
	}
}

// stampTree gives every path under root (root too) a distinct time in
// 2001, deepest first so that a directory's time is set after its
// children's, and returns them by slash path ("." for root).
func stampTree(t *testing.T, root string) map[string]time.Time {
	t.Helper()
	var paths []string
	filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	})
	sort.Sort(sort.Reverse(sort.StringSlice(paths)))
	times := map[string]time.Time{}
	base := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	for i, p := range paths {
		mod := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		times[filepath.ToSlash(rel)] = mod
	}
	return times
}

// localTimes is the modification time of every path under root.
func localTimes(t *testing.T, root string) map[string]time.Time {
	t.Helper()
	times := map[string]time.Time{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		times[filepath.ToSlash(rel)] = fi.ModTime().UTC()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return times
}

func compareTimes(t *testing.T, where string, got, want map[string]time.Time) {
	t.Helper()
	for p, w := range want {
		if g := got[p]; !g.Equal(w) {
			t.Errorf("%s: %s has the time %v, want %v", where, p, g, w)
		}
	}
}

// remoteTimes reads the modification time of each path under dir in the
// sandbox, as execd reports it.
func remoteTimes(t *testing.T, env interface{ Must(...string) string }, id, dir string, rels []string) map[string]time.Time {
	t.Helper()
	paths := make([]string, len(rels))
	for i, rel := range rels {
		paths[i] = strings.TrimSuffix(dir+"/"+rel, "/.")
	}
	var infos []struct {
		Path       string `json:"path"`
		ModifiedAt string `json:"modified_at"`
	}
	out := env.Must(append([]string{"file", "info", id, "-o", "json"}, paths...)...)
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("file info: %v\n%s", err, out)
	}
	byPath := map[string]time.Time{}
	for _, fi := range infos {
		mod, err := time.Parse(time.RFC3339Nano, fi.ModifiedAt)
		if err != nil {
			t.Fatalf("%s: modified_at %q: %v", fi.Path, fi.ModifiedAt, err)
		}
		byPath[fi.Path] = mod.UTC()
	}
	times := map[string]time.Time{}
	for i, rel := range rels {
		times[rel] = byPath[paths[i]]
	}
	return times
}

// Every path keeps its mode and its modification time, into the sandbox
// and back, by tar and by the files API: make must see the sources as old
// as they are, and a 0700 directory must stay 0700 in every run.
func TestTimesAndModesKept(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"tar", "files"} {
		t.Run(via, func(t *testing.T) {
			env, id := newSandbox(t)
			src := filepath.Join(t.TempDir(), "proj")
			makeTree(t, src, stamped)
			if err := os.Chmod(src, 0o750); err != nil {
				t.Fatal(err)
			}
			want := stampTree(t, src)
			rels := make([]string, 0, len(want))
			for rel := range want {
				rels = append(rels, rel)
			}
			env.Must("cp", src, id+":/workspace/proj", "--via", via)
			compareTimes(t, "in the sandbox", remoteTimes(t, env, id, "/workspace/proj", rels), want)

			back := filepath.Join(t.TempDir(), "back")
			env.Must("cp", id+":/workspace/proj", back, "--via", via)
			compareTrees(t, readTree(t, back), stamped)
			if fi, err := os.Stat(back); err != nil || fi.Mode().Perm() != 0o750 {
				t.Errorf("the tree's own directory: %v %v, want mode 0750", fi, err)
			}
			compareTimes(t, "back here", localTimes(t, back), want)

			// DIR/. goes into a directory that is there, which keeps its
			// own mode: the copy did not make it.
			env.Must("file", "mkdir", id, "/workspace/existing")
			env.Must("file", "chmod", id, "/workspace/existing", "--mode", "751")
			env.Must("cp", src+"/.", id+":/workspace/existing", "--via", via)
			if info := env.Must("file", "info", id, "/workspace/existing", "-o", "json"); !strings.Contains(info, `"mode": 751`) {
				t.Errorf("the existing directory's mode changed: %s", info)
			}

			// One file, both ways.
			env.Must("cp", filepath.Join(src, "build.sh"), id+":/workspace/one.sh")
			compareTimes(t, "one file in the sandbox", remoteTimes(t, env, id, "/workspace", []string{"one.sh"}),
				map[string]time.Time{"one.sh": want["build.sh"]})
			one := filepath.Join(t.TempDir(), "one.sh")
			env.Must("cp", id+":/workspace/one.sh", one)
			if fi, err := os.Stat(one); err != nil || !fi.ModTime().Equal(want["build.sh"]) || fi.Mode().Perm() != 0o775 {
				t.Errorf("one file back: %v %v", fi, err)
			}
		})
	}
}

// A tar stream on stdin keeps its entries' times; one cut between two
// entries (no end-of-archive blocks) is exit 1, not a clean end.
func TestTarStreamTimesAndTruncation(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	mod := time.Date(2002, 3, 4, 5, 6, 7, 0, time.UTC)
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	for _, h := range []*tar.Header{
		{Name: "docs/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mod},
		{Name: "docs/a", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1, ModTime: mod.Add(time.Hour)},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(make([]byte, h.Size))
	}
	tw.Flush() // the last entry is whole, the trailer not written yet
	cut := in.String()
	tw.Close()
	env.RunStdin(in.String(), "cp", "-", id+":/workspace/whole").ExpectCode(t, 0)
	compareTimes(t, "from a tar stream", remoteTimes(t, env, id, "/workspace/whole", []string{"docs", "docs/a"}),
		map[string]time.Time{"docs": mod, "docs/a": mod.Add(time.Hour)})

	env.RunStdin(cut, "cp", "-", id+":/workspace/cut").ExpectError(t, 1,
		"cannot read the tar stream: the tar stream ended without its end-of-archive blocks: it was cut short")
	// Nothing at all (the tar before the pipe failed) is no clean end either.
	env.RunStdin("", "cp", "-", id+":/workspace/empty").ExpectError(t, 1, "cannot read the tar stream: the tar stream is empty")
}

// A symlink to a directory, named as the source, is followed: its
// directory is copied under the link's name (a link inside stays a link).
func TestSymlinkedSourceDirectoryIsFollowed(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"tar", "files"} {
		t.Run(via, func(t *testing.T) {
			env, id := newSandbox(t)
			dir := t.TempDir()
			makeTree(t, filepath.Join(dir, "real"), map[string]node{
				"f":    {mode: 0o644, content: "data"},
				"link": {mode: fs.ModeSymlink, link: "f"},
			})
			if err := os.Symlink("real", filepath.Join(dir, "current")); err != nil {
				t.Fatal(err)
			}
			out := env.Must("cp", filepath.Join(dir, "current"), id+":/workspace/current", "--via", via)
			if want := "OK: Copied " + filepath.Join(dir, "current") + " → " + id + ":/workspace/current (1 file, 1 directory, 1 symlink, 4 B)\n"; out != want {
				t.Errorf("said %q, want %q", out, want)
			}
			if got := env.Must("file", "cat", id, "/workspace/current/f"); got != "data" {
				t.Errorf("the file through the followed link: %q", got)
			}
			back := t.TempDir()
			env.Must("cp", id+":/workspace/current", back)
			compareTrees(t, readTree(t, filepath.Join(back, "current")), map[string]node{
				"f":    {mode: 0o644, content: "data"},
				"link": {mode: fs.ModeSymlink, link: "f"},
			})
		})
	}
}
