package cp_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/transfer"
	"github.com/osb-dev/osb/internal/umask"
)

func TestMain(m *testing.M) {
	umask.Set(0o022)
	os.Exit(m.Run())
}

// node is what a test expects of one path in a tree.
type node struct {
	mode    fs.FileMode // type and permission bits
	content string      // a file's
	link    string      // a symlink's target
}

// makeTree writes nodes under root, directories first.
func makeTree(t *testing.T, root string, nodes map[string]node) {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		nd, p := nodes[n], filepath.Join(root, n)
		var err error
		switch {
		case nd.mode.IsDir():
			err = os.MkdirAll(p, 0o755)
		case nd.mode&fs.ModeSymlink != 0:
			err = os.Symlink(nd.link, p)
		default:
			err = os.WriteFile(p, []byte(nd.content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Modes last, deepest first, so read-only directories can be filled.
	for i := len(names) - 1; i >= 0; i-- {
		if nd := nodes[names[i]]; nd.mode&fs.ModeSymlink == 0 {
			if err := os.Chmod(filepath.Join(root, names[i]), nd.mode.Perm()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// readTree describes every path under root.
func readTree(t *testing.T, root string) map[string]node {
	t.Helper()
	got := map[string]node{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		nd := node{mode: fi.Mode() & (fs.ModeType | fs.ModePerm)}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			nd.mode = fs.ModeSymlink
			nd.link, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			nd.content = string(b)
		}
		got[filepath.ToSlash(rel)] = nd
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func compareTrees(t *testing.T, got, want map[string]node) {
	t.Helper()
	for n, w := range want {
		if g, ok := got[n]; !ok || g != w {
			t.Errorf("%s: got %+v (present %v), want %+v", n, g, ok, w)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("unexpected %s", n)
		}
	}
}

// project is a small tree with what a copy must keep: modes, an empty and a
// read-only directory, an executable, links inside and outside the tree.
var project = map[string]node{
	"a.txt":           {mode: 0o644, content: "hello\n"},
	"bin":             {mode: fs.ModeDir | 0o755},
	"bin/run.sh":      {mode: 0o751, content: "#!/bin/sh\necho run\n"},
	"empty":           {mode: fs.ModeDir | 0o700},
	"locked":          {mode: fs.ModeDir | 0o555},
	"secret":          {mode: 0o600, content: strings.Repeat("\x00\xff", 40000)},
	"link":            {mode: fs.ModeSymlink, link: "a.txt"},
	"bin/out":         {mode: fs.ModeSymlink, link: "../../../etc/passwd"},
	"bin/deep":        {mode: fs.ModeDir | 0o755},
	"bin/deep/x.json": {mode: 0o640, content: `{"k":1}`},
}

func newSandbox(t *testing.T) (*cmdtest.Env, string) {
	env := cmdtest.New(t) // isolated: the sandbox's commands see the paths the files API writes
	return env, env.NewSandbox()
}

// A tree goes into the sandbox and comes back the same: contents, modes,
// symlinks (also one pointing out of the tree), empty and read-only
// directories; a unique id prefix names the sandbox.
func TestTreeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"tar", "files"} {
		t.Run(via, func(t *testing.T) { testTreeRoundTrip(t, "--via", via) })
	}
}

func testTreeRoundTrip(t *testing.T, via ...string) {
	env, id := newSandbox(t)
	src := filepath.Join(t.TempDir(), "proj")
	makeTree(t, src, project)
	env.Must("file", "mkdir", id, "/workspace/in")

	out := env.Must(append([]string{"cp", src, id[:8] + ":/workspace/in"}, via...)...)
	if want := "OK: Copied " + src + " → " + id[:8] + ":/workspace/in/proj (4 files, 5 directories, 2 symlinks, 78.2 KiB)\n"; out != want {
		t.Errorf("upload said %q, want %q", out, want)
	}
	if got := env.Must("file", "cat", id, "/workspace/in/proj/bin/deep/x.json"); got != `{"k":1}` {
		t.Errorf("remote file: %q", got)
	}

	back := t.TempDir()
	out = env.Must(append([]string{"cp", id + ":/workspace/in/proj", back}, via...)...)
	if want := "OK: Copied " + id + ":/workspace/in/proj → " + filepath.Join(back, "proj") + " (4 files, 5 directories, 2 symlinks, 78.2 KiB)\n"; out != want {
		t.Errorf("download said %q, want %q", out, want)
	}
	compareTrees(t, readTree(t, filepath.Join(back, "proj")), project)

	// Into a directory that does not exist yet: it becomes the copy.
	fresh := filepath.Join(t.TempDir(), "new")
	env.Must(append([]string{"cp", id + ":/workspace/in/proj", fresh}, via...)...)
	compareTrees(t, readTree(t, fresh), project)
	stagingLeft(t, back)

}

// stagingLeft fails if a download left a staging directory under dir.
func stagingLeft(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), transfer.StagePrefix) {
			t.Errorf("staging left: %s", p)
		}
		return nil
	})
}

// One file goes into an existing directory under its name, keeps its mode,
// and can be named with a new name.
func TestSingleFile(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "tool")
	os.WriteFile(f, []byte("#!/bin/sh\n"), 0o700)
	env.Must("file", "mkdir", id, "/workspace/d")
	env.Must("cp", f, id+":/workspace/d")
	out := env.Must("cp", f, id+":/workspace/renamed", "-o", "json")
	want := `{
  "source": "` + f + `",
  "destination": "` + id + `:/workspace/renamed",
  "files": 1,
  "directories": 0,
  "symlinks": 0,
  "bytes": 10
}
`
	if out != want {
		t.Errorf("json result:\n%s\nwant:\n%s", out, want)
	}
	infos := env.Must("file", "info", id, "/workspace/d/tool", "/workspace/renamed", "-o", "json")
	if strings.Count(infos, `"mode": 700`) != 2 {
		t.Errorf("modes not kept: %s", infos)
	}
	back := t.TempDir()
	env.Must("cp", id+":/workspace/renamed", back+"/")
	if fi, err := os.Stat(filepath.Join(back, "renamed")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("downloaded: %v %v", fi, err)
	}
	env.Run("cp", f, id+":/workspace/nodir/").ExpectError(t, 2, "/workspace/nodir/: no such directory in the sandbox")
}

// Tar streams both ways: what comes out is a tar of the tree under its
// name; what goes in is unpacked, and entries that would land outside the
// destination are refused and named, the others written.
func TestTarStreams(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	src := filepath.Join(t.TempDir(), "proj")
	makeTree(t, src, project)
	env.Must("cp", src, id+":/workspace/proj")

	r := env.Run("cp", id+":/workspace/proj", "-").ExpectCode(t, 0)
	got := map[string]node{}
	tr := tar.NewReader(strings.NewReader(r.Stdout))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		nd := node{mode: fs.FileMode(hdr.Mode).Perm(), content: string(b)}
		switch hdr.Typeflag {
		case tar.TypeDir:
			nd.mode |= fs.ModeDir
		case tar.TypeSymlink:
			nd = node{mode: fs.ModeSymlink, link: hdr.Linkname}
		}
		got[strings.TrimSuffix(hdr.Name, "/")] = nd
	}
	want := map[string]node{"proj": {mode: fs.ModeDir | 0o755}}
	for n, nd := range project {
		want["proj/"+n] = nd
	}
	compareTrees(t, got, want)
	if r.Stderr != "" {
		t.Errorf("stderr %q", r.Stderr)
	}

	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	add := func(h *tar.Header, body string) {
		h.Size = int64(len(body))
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, body)
	}
	add(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "./docs/", Typeflag: tar.TypeDir, Mode: 0o750}, "")
	add(&tar.Header{Name: "./docs/readme", Mode: 0o600}, "read me")
	add(&tar.Header{Name: "../escape", Mode: 0o644}, "nope")
	add(&tar.Header{Name: "/etc/evil", Mode: 0o644}, "nope")
	add(&tar.Header{Name: "current", Typeflag: tar.TypeSymlink, Linkname: "docs/readme"}, "")
	tw.Close()
	r = env.RunStdin(in.String(), "cp", "-", id+":/workspace/unpacked")
	r.ExpectError(t, 1, `2 file(s) not written in the sandbox: ../escape, /etc/evil (first error: "../escape" would land outside the destination)`)
	if got := env.Must("file", "cat", id, "/workspace/unpacked/current"); got != "read me" {
		t.Errorf("link or file not written: %q", got)
	}
	infos := env.Must("file", "info", id, "/workspace/unpacked/docs", "/workspace/unpacked/docs/readme", "-o", "json")
	if !strings.Contains(infos, `"mode": 750`) || !strings.Contains(infos, `"mode": 600`) {
		t.Errorf("modes: %s", infos)
	}
	for _, p := range []string{"/workspace/escape", "/etc/evil"} {
		env.Run("file", "info", id, p).ExpectCode(t, 4)
	}
}

// A symlink already in the local destination is never followed: the file
// that would go through it is not written, and is named.
func TestExtractNeverFollowsLinksOut(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"tar", "files"} {
		t.Run(via, func(t *testing.T) { testExtractNeverFollowsLinksOut(t, via) })
	}
}

func testExtractNeverFollowsLinksOut(t *testing.T, via string) {
	env, id := newSandbox(t)
	env.Must("file", "write", id, "/workspace/proj/sub/file", "-c", "data")
	env.Must("file", "write", id, "/workspace/proj/top", "-c", "top")
	outside := t.TempDir()
	dest := t.TempDir()
	os.MkdirAll(filepath.Join(dest, "proj"), 0o755)
	if err := os.Symlink(outside, filepath.Join(dest, "proj", "sub")); err != nil {
		t.Fatal(err)
	}
	// A link where a file goes is replaced by the file, its target left alone.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("mine"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dest, "proj", "top")); err != nil {
		t.Fatal(err)
	}
	r := env.Run("cp", id+":/workspace/proj", dest, "--via", via)
	r.ExpectError(t, 1, "not written here: "+filepath.Join(dest, "proj", "sub", "file"))
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written through the link: %v", entries)
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine" {
		t.Errorf("written through the link in the file's place: %q", b)
	}
	// The files API stops at the first failure; a tar is read to its end.
	if fi, err := os.Lstat(filepath.Join(dest, "proj", "top")); via == "tar" && (err != nil || !fi.Mode().IsRegular()) {
		t.Errorf("the link in the file's place is still there: %v %v", fi, err)
	}
	stagingLeft(t, dest)
}

// Usage errors come before any request, with exit 2.
func TestRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "127.0.0.1:1"
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"a", "b"}, "neither SRC nor DST names a sandbox; write one as SANDBOX_ID:PATH"},
		{[]string{"sb:/a", "sb2:/b"}, "both SRC and DST are in a sandbox"},
		{[]string{"-", "-"}, "neither SRC nor DST names a sandbox"},
		{[]string{dir, "sb:"}, "give a path after the sandbox id, as in sb:/workspace"},
		{[]string{dir + "/missing", "sb:/x"}, "local path '" + dir + "/missing' does not exist"},
		{[]string{dir, "sb:/x", "--jobs", "0"}, "--jobs must be between 1 and 64, not 0"},
		{[]string{"./a:b", "c"}, "neither SRC nor DST names a sandbox"},
		{[]string{"sb:/x"}, "missing DST"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			env.Run(append([]string{"cp"}, tc.args...)...).ExpectError(t, 2, tc.want)
		})
	}
}

// faultyExecd is a lifecycle server and an execd whose file transfers fail
// for some paths: a download cut half way, an upload refused.
func faultyExecd(t *testing.T) *cmdtest.Env {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"endpoint": r.Host + "/execd", "headers": map[string]string{}})
	})
	info := func(p, typ string, size int) map[string]any {
		return map[string]any{"path": p, "type": typ, "size": size, "mode": 644, "owner": "root", "group": "root",
			"modified_at": "2026-01-01T00:00:00Z", "created_at": "2026-01-01T00:00:00Z"}
	}
	mux.HandleFunc("GET /execd/files/info", func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Query().Get("path")
		typ := "directory"
		if p == "/missing" {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"code":"FILE_NOT_FOUND","message":"no such file"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{p: info(p, typ, 0)})
	})
	mux.HandleFunc("GET /execd/directories/list", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode([]any{info("/src/good", "file", 4), info("/src/cut", "file", 1000)})
	})
	mux.HandleFunc("GET /execd/files/download", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("path") == "/src/good" {
			w.Write([]byte("good"))
			return
		}
		conn, buf, _ := http.NewResponseController(w).Hijack()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n%s", strings.Repeat("n", 500))
		buf.Flush()
		conn.Close()
	})
	mux.HandleFunc("POST /execd/directories", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /execd/files/upload", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(500)
		fmt.Fprint(w, `{"code":"RUNTIME_ERROR","message":"disk full"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = srv.Listener.Addr().String()
	env.Vars["OPEN_SANDBOX_API_KEY"] = "k"
	return env
}

// A download cut half way leaves no partial file and names it; a file that
// was already there stays as it was.
func TestFailedDownloadLeavesNoPartialFile(t *testing.T) {
	t.Parallel()
	env := faultyExecd(t)
	dest := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(dest, 0o755)
	os.WriteFile(filepath.Join(dest, "cut"), []byte("old"), 0o644)
	r := env.Run("cp", "sb-1:/src", filepath.Dir(dest), "--jobs", "1")
	r.ExpectError(t, 1, "1 file(s) not written here: "+filepath.Join(dest, "cut")+" (first error: the connection ended after 500 of 1000 bytes)")
	// This execd has no PTY API: --via tar refuses, auto (above) fell back.
	env.Run("cp", "sb-1:/src", filepath.Dir(dest), "--via", "tar").ExpectError(t, 1, "this sandbox cannot stream a tar (no PTY API or no tar)")
	if b, _ := os.ReadFile(filepath.Join(dest, "cut")); string(b) != "old" {
		t.Errorf("the old file changed: %q", b)
	}
	stagingLeft(t, dest)
}

// An upload that fails names the remote files not written.
func TestFailedUploadNamesRemoteFiles(t *testing.T) {
	t.Parallel()
	env := faultyExecd(t)
	src := filepath.Join(t.TempDir(), "proj")
	makeTree(t, src, map[string]node{"a": {mode: 0o644, content: "a"}, "b": {mode: 0o644, content: "b"}})
	r := env.Run("cp", src, "sb-1:/dst", "--jobs", "1")
	r.ExpectError(t, 1, "2 file(s) not written in the sandbox: /dst/proj/a, /dst/proj/b (first error: disk full")
}

// On a terminal one progress display covers the whole tree and is gone
// before the result.
func TestOneProgressForTheTree(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	src := filepath.Join(t.TempDir(), "proj")
	nodes := map[string]node{}
	for i := range 20 {
		nodes[fmt.Sprintf("f%02d", i)] = node{mode: 0o644, content: strings.Repeat("x", 64<<10)}
	}
	makeTree(t, src, nodes)
	env.TTY = true
	r := env.Run("cp", src, id+":/workspace/p").ExpectCode(t, 0)
	if strings.Count(r.Stderr, "Copying 20 files") == 0 || strings.Contains(r.Stderr, "Uploading") {
		t.Errorf("progress: %q", r.Stderr)
	}
	if last := r.Stderr[strings.LastIndex(r.Stderr, "\r")+1:]; strings.TrimSpace(last) != "" {
		t.Errorf("progress left on the line: %q", last)
	}
}

// DIR/. copies what DIR holds, not DIR itself, both ways (as cp -a and
// docker cp do): into DST when it exists, else as DST.
func TestDirDotCopiesContents(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"tar", "files"} {
		t.Run(via, func(t *testing.T) { testDirDotCopiesContents(t, via) })
	}
}

func testDirDotCopiesContents(t *testing.T, via string) {
	env, id := newSandbox(t)
	src := filepath.Join(t.TempDir(), "proj")
	makeTree(t, src, project)
	env.Must("file", "mkdir", id, "/workspace/in")

	out := env.Must("cp", src+"/.", id+":/workspace/in", "--via", via)
	if want := "OK: Copied " + src + "/. → " + id + ":/workspace/in (4 files, 5 directories, 2 symlinks, 78.2 KiB)\n"; out != want {
		t.Errorf("upload said %q, want %q", out, want)
	}
	if got := env.Must("file", "cat", id, "/workspace/in/bin/deep/x.json"); got != `{"k":1}` {
		t.Errorf("remote file: %q", got)
	}

	back := t.TempDir()
	os.WriteFile(filepath.Join(back, "kept"), []byte("mine"), 0o644)
	out = env.Must("cp", id+":/workspace/in/.", back, "--via", via)
	if want := "OK: Copied " + id + ":/workspace/in/. → " + back + " (4 files, 5 directories, 2 symlinks, 78.2 KiB)\n"; out != want {
		t.Errorf("download said %q, want %q", out, want)
	}
	want := map[string]node{"kept": {mode: 0o644, content: "mine"}}
	for n, nd := range project {
		want[n] = nd
	}
	compareTrees(t, readTree(t, back), want)

	// A destination that does not exist yet becomes the copy.
	fresh := filepath.Join(t.TempDir(), "new")
	env.Must("cp", id+":/workspace/in/.", fresh, "--via", via)
	compareTrees(t, readTree(t, fresh), project)
	stagingLeft(t, back)

	// As a tar stream: the entries are named as tar -C DIR . names them.
	r := env.Run("cp", id+":/workspace/in/.", "-").ExpectCode(t, 0)
	var names []string
	tr := tar.NewReader(strings.NewReader(r.Stdout))
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), "./ a.txt bin/ bin/deep/ bin/deep/x.json bin/out bin/run.sh empty/ link locked/ secret"; got != want {
		t.Errorf("tar entries %q, want %q", got, want)
	}
}

// Both arguments complete as ID: (sandboxes, with what was typed as a
// prefix, beside the local names that fit) and, after ID:, as the remote
// directory's entries; a word that can only be local keeps the shell's
// file completion.
func TestCompletion(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	env.Must("file", "write", id, "/workspace/proj/a.txt", "-c", "a")
	env.Must("file", "write", id, "/workspace/pics", "-c", "p")
	env.Must("file", "write", id, "/workspace/.hidden", "-c", "h")
	const noSpace, noSpaceNoFiles, files = ":2\n", ":6\n", ":0\n"
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"cp", id[:6]}, id + ":\tRunning\n" + noSpace},
		{[]string{"cp", "./src", id[:6]}, id + ":\tRunning\n" + noSpace},
		{[]string{"cp", id[:6] + ":"}, id[:6] + ":/\n" + noSpaceNoFiles},
		{[]string{"cp", id[:6] + ":/workspace/p"}, id[:6] + ":/workspace/pics\n" + id[:6] + ":/workspace/proj/\n" + noSpaceNoFiles},
		{[]string{"cp", "x", id + ":/workspace/proj/"}, id + ":/workspace/proj/a.txt\n" + noSpaceNoFiles},
		{[]string{"cp", id + ":/workspace/."}, id + ":/workspace/.hidden\n" + noSpaceNoFiles},
		{[]string{"cp", id + ":/nowhere/"}, noSpaceNoFiles},
		{[]string{"cp", "./"}, files},
		{[]string{"cp", "zz"}, files}, // no sandbox id starts with z
	} {
		r := env.Run(append([]string{"__complete"}, tc.line...)...).ExpectCode(t, 0)
		if r.Stdout != tc.want {
			t.Errorf("%q: got %q, want %q", tc.line, r.Stdout, tc.want)
		}
	}
	// Before a colon the word may be local too: the names here are offered.
	r := env.Run("__complete", "cp", "").ExpectCode(t, 0)
	if !strings.Contains(r.Stdout, id+":\tRunning\n") || !strings.Contains(r.Stdout, "\ncp.go\n") {
		t.Errorf("first word: %q", r.Stdout)
	}
}

// A tree downloaded as a tar shows one progress bar with the total, worked
// out from a listing while the tar starts, and the bar is gone before the
// result.
func TestTarDownloadProgressHasTotal(t *testing.T) {
	t.Parallel()
	env, id := newSandbox(t)
	src := filepath.Join(t.TempDir(), "proj")
	nodes := map[string]node{"sub": {mode: fs.ModeDir | 0o755}}
	for i := range 10 {
		nodes[fmt.Sprintf("sub/f%02d", i)] = node{mode: 0o644, content: strings.Repeat("x", 100<<10)}
	}
	makeTree(t, src, nodes)
	env.Must("cp", src, id+":/workspace/p")
	env.TTY = true
	r := env.Run("cp", id+":/workspace/p", t.TempDir(), "--via", "tar").ExpectCode(t, 0)
	if !strings.Contains(r.Stderr, "Copying /workspace/p") || !strings.Contains(r.Stderr, "/1.0 MB)") {
		t.Errorf("progress without its total (10 × 100 KiB): %q", r.Stderr)
	}
	if last := r.Stderr[strings.LastIndex(r.Stderr, "\r")+1:]; strings.TrimSpace(last) != "" {
		t.Errorf("progress left on the line: %q", last)
	}
	if !strings.HasSuffix(r.Stdout, "(10 files, 2 directories, 1000.0 KiB)\n") {
		t.Errorf("result: %q", r.Stdout)
	}
}
