//go:build linux

package execd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// fileServer serves the execd API of a fresh sandbox over real HTTP.
func fileServer(t *testing.T) (*sandbox.Sandbox, string) {
	t.Helper()
	sb := newSandbox(t)
	srv := httptest.NewServer(New(sb, Options{}))
	t.Cleanup(srv.Close)
	return sb, srv.URL
}

// hostPath is where a sandbox path lives on this machine.
func hostPath(sb *sandbox.Sandbox, p string) string {
	return filepath.Join(sb.FSDir(), filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

// expect fails unless the answer has status and, when given, exactly the
// execd error body {"code","message"}.
func (a answer) expect(t *testing.T, status int, codeAndMessage ...string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d; body %s", a.status, status, a.body)
	}
	if len(codeAndMessage) == 2 {
		want, _ := json.Marshal(map[string]string{"code": codeAndMessage[0], "message": codeAndMessage[1]})
		if strings.TrimSpace(a.body) != string(want) {
			t.Fatalf("body %s, want %s", a.body, want)
		}
	}
}

func q(pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	return "?" + v.Encode()
}

type part struct {
	name, filename, content string
}

func multipartBody(parts ...part) (io.Reader, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := fmt.Sprintf(`form-data; name="%s"`, p.name)
		if p.filename != "" {
			cd += fmt.Sprintf(`; filename="%s"`, p.filename)
		}
		h.Set("Content-Disposition", cd)
		w, _ := mw.CreatePart(h)
		io.WriteString(w, p.content)
	}
	mw.Close()
	return &b, mw.FormDataContentType()
}

func upload(t *testing.T, base string, parts ...part) answer {
	t.Helper()
	body, ct := multipartBody(parts...)
	return call(t, "POST", base+"/files/upload", body, "Content-Type", ct)
}

func meta(path string, mode int) part {
	return part{"metadata", "metadata", fmt.Sprintf(`{"path":%q,"mode":%d}`, path, mode)}
}

func content(s string) part { return part{"file", "blob", s} }

func TestUploadDownloadByteExact(t *testing.T) {
	t.Parallel()
	_, base := fileServer(t)
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for name, data := range map[string]string{"empty": "", "binary": "\x00\xff\x00\r\n", "3MB": string(big)} {
		upload(t, base, meta("/workspace/"+name, 644), content(data)).expect(t, 200)
		got := call(t, "GET", base+"/files/download"+q("path", "/workspace/"+name), nil)
		got.expect(t, 200)
		if got.body != data {
			t.Errorf("%s: downloaded %d bytes, not the %d uploaded", name, len(got.body), len(data))
		}
		if cl := got.header.Get("Content-Length"); cl != fmt.Sprint(len(data)) {
			t.Errorf("%s: Content-Length %q", name, cl)
		}
	}
}

func TestUploadSemantics(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	// Parents are created; mode applies; relative paths start at /workspace.
	upload(t, base, meta("deep/er/f.txt", 640), content("one")).expect(t, 200)
	fi, err := os.Stat(hostPath(sb, "/workspace/deep/er/f.txt"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("stat: %v %v", fi, err)
	}
	// An existing file is truncated and overwritten; mode 0 leaves it alone.
	upload(t, base, meta("/workspace/deep/er/f.txt", 0), content("2")).expect(t, 200)
	if b, _ := os.ReadFile(hostPath(sb, "/workspace/deep/er/f.txt")); string(b) != "2" {
		t.Errorf("overwrite: %q", b)
	}
	// A new file without mode gets 0755, as execd's umask gives.
	upload(t, base, meta("/tmp/new", 0), content("x")).expect(t, 200)
	if fi, _ := os.Stat(hostPath(sb, "/tmp/new")); fi.Mode().Perm() != 0o755 {
		t.Errorf("default mode %v", fi.Mode())
	}
	// Pairs match by position; a file part may come before its metadata.
	upload(t, base, content("B"), meta("/workspace/b", 600), meta("/workspace/c", 600), content("C")).expect(t, 200)
	for p, want := range map[string]string{"/workspace/b": "B", "/workspace/c": "C"} {
		if b, _ := os.ReadFile(hostPath(sb, p)); string(b) != want {
			t.Errorf("%s: %q", p, b)
		}
	}
	if spools, _ := filepath.Glob(filepath.Join(sb.Dir(), "upload-spool-*")); len(spools) != 0 {
		t.Errorf("spool files left: %v", spools)
	}
}

func TestUploadKeepsWhatItReplaces(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	target := hostPath(sb, "/workspace/kept")
	os.WriteFile(target, []byte("old"), 0o600)
	// Mode 0 keeps the mode of the file replaced.
	upload(t, base, meta("kept", 0), content("new")).expect(t, 200)
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 || mustRead(t, target) != "new" {
		t.Errorf("replaced file: %v %q", fi.Mode(), mustRead(t, target))
	}
	// A symlink is written through, as execd does.
	os.Symlink("kept", hostPath(sb, "/workspace/link"))
	upload(t, base, meta("link", 0), content("through")).expect(t, 200)
	if fi, _ := os.Lstat(hostPath(sb, "/workspace/link")); fi.Mode()&os.ModeSymlink == 0 || mustRead(t, target) != "through" {
		t.Errorf("symlink replaced instead of written through: %v", fi.Mode())
	}
}

// TestBrokenUploadLeavesTheTarget cuts an upload half way through its file
// part: the file it was replacing stays as it was, and nothing is left over.
func TestBrokenUploadLeavesTheTarget(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	closed := make(chan struct{})
	srv := httptest.NewUnstartedServer(New(sb, Options{}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			close(closed) // after the handler has returned
		}
	}
	srv.Start()
	defer srv.Close()
	target := hostPath(sb, "/workspace/target")
	os.WriteFile(target, []byte("precious"), 0o644)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	body := "--B\r\nContent-Disposition: form-data; name=\"metadata\"; filename=\"metadata\"\r\n\r\n" +
		`{"path":"/workspace/target","mode":644}` + "\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n" +
		strings.Repeat("partial ", 1000)
	fmt.Fprintf(conn, "POST /files/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: %d\r\n\r\n%s", len(body)+100000, body)
	conn.Close()
	<-closed
	if got := mustRead(t, target); got != "precious" {
		t.Errorf("target changed by a broken upload: %.40q…", got)
	}
	if left, _ := filepath.Glob(hostPath(sb, "/workspace/.osb-upload-*")); len(left) != 0 {
		t.Errorf("left over: %v", left)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUploadErrors(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	os.WriteFile(hostPath(sb, "/workspace/plain"), nil, 0o644)
	cases := []struct {
		name   string
		parts  []part
		status int
		code   string
		msg    string
	}{
		{"metadata as a plain field", []part{{"metadata", "", `{"path":"/workspace/x"}`}, content("x")}, 400, "INVALID_FILE_METADATA", "metadata file is missing"},
		{"no parts", nil, 400, "INVALID_FILE", "multipart form is empty"},
		{"no file", []part{meta("/workspace/x", 644)}, 400, "INVALID_FILE_CONTENT", "file is missing"},
		{"count mismatch", []part{meta("/workspace/x", 644), meta("/workspace/y", 644), content("x")}, 400, "INVALID_FILE", "metadata and file count mismatch: 2 vs 1"},
		{"empty path", []part{{"metadata", "m", `{"mode":644}`}, content("x")}, 400, "INVALID_FILE_METADATA", "metadata path is empty"},
		// execd answers these three with 500 (the last two after writing the file).
		{"target is a directory", []part{meta("/workspace", 644), content("x")}, 400, "INVALID_FILE", "error opening destination file /workspace: is a directory"},
		{"mode not octal", []part{meta("/workspace/m1", 999), content("x")}, 400, "INVALID_FILE_METADATA", "invalid metadata: invalid mode 999: not octal digits"},
		{"unknown owner", []part{{"metadata", "m", `{"path":"/workspace/m2","owner":"no-such-user-osb"}`}, content("x")}, 400, "INVALID_FILE_METADATA", "invalid metadata: failed to lookup user no-such-user-osb: user: unknown user no-such-user-osb"},
		{"parent is a file", []part{meta("/workspace/plain/x", 644), content("x")}, 400, "INVALID_FILE", "error creating directory /workspace/plain: file exists"},
		{"outside the sandbox", []part{meta("../../etc/passwd", 644), content("x")}, 400, "INVALID_FILE", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := upload(t, base, tc.parts...)
			if tc.msg == "" {
				a.expect(t, tc.status)
				return
			}
			a.expect(t, tc.status, tc.code, tc.msg)
		})
	}
	a := upload(t, base, part{"metadata", "m", `{"path":"/workspace/x","mode":"644"}`}, content("x"))
	if a.status != 400 || !strings.Contains(a.body, `"code":"INVALID_FILE_METADATA"`) || !strings.Contains(a.body, "invalid metadata format. json: cannot unmarshal string") {
		t.Errorf("mode as a string: %d %s", a.status, a.body)
	}
	call(t, "POST", base+"/files/upload", strings.NewReader("{}"), "Content-Type", "application/json").
		expect(t, 400, "INVALID_FILE", "multipart form is empty")
	for _, p := range []string{"/workspace/m1", "/workspace/m2"} {
		if _, err := os.Lstat(hostPath(sb, p)); !os.IsNotExist(err) {
			t.Errorf("a refused upload wrote %s: %v", p, err)
		}
	}
}

func TestDownloadHeadersAndRanges(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	os.WriteFile(hostPath(sb, "/workspace/digits.bin"), []byte("0123456789"), 0o644)
	u := base + "/files/download" + q("path", "/workspace/digits.bin")

	full := call(t, "GET", u, nil)
	full.expect(t, 200)
	for k, want := range map[string]string{
		"Content-Type": "application/octet-stream", "Content-Length": "10", "Accept-Ranges": "bytes",
		"Content-Disposition": `attachment; filename="digits.bin"`,
	} {
		if got := full.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if full.header.Get("Last-Modified") == "" {
		t.Error("no Last-Modified")
	}

	for spec, want := range map[string]struct{ rng, body string }{
		"bytes=2-5":       {"bytes 2-5/10", "2345"},
		"bytes=7-":        {"bytes 7-9/10", "789"},
		"bytes=-3":        {"bytes 7-9/10", "789"},
		"bytes=5-100":     {"bytes 5-9/10", "56789"},
		"bytes=0-1,4-5":   {"bytes 0-1/10", "01"},
		"bytes=-100":      {"bytes 0-9/10", "0123456789"},
		"bytes=9-9":       {"bytes 9-9/10", "9"},
		" bytes=3-3 ":     {"bytes 3-3/10", "3"},
		"bytes=0-0,50-60": {"bytes 0-0/10", "0"},
	} {
		a := call(t, "GET", u, nil, "Range", spec)
		if a.status != 206 || a.header.Get("Content-Range") != want.rng || a.body != want.body ||
			a.header.Get("Content-Length") != fmt.Sprint(len(want.body)) {
			t.Errorf("%s: %d %q %q", spec, a.status, a.header.Get("Content-Range"), a.body)
		}
	}

	past := call(t, "GET", u, nil, "Range", "bytes=50-60")
	if past.status != 416 || past.header.Get("Content-Range") != "bytes */10" || past.body != "invalid range: failed to overlap\n" {
		t.Errorf("past the end: %d %q %q", past.status, past.header.Get("Content-Range"), past.body)
	}
	for _, spec := range []string{"items=1-2", "bytes=5-2", "bytes=x-"} {
		call(t, "GET", u, nil, "Range", spec).expect(t, 416, "UNKNOWN", "")
	}
}

func TestDownloadErrorsAndLines(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	os.WriteFile(hostPath(sb, "/workspace/lines"), []byte("l1\nl2\r\nl3\nl4"), 0o644)
	os.WriteFile(hostPath(sb, "/workspace/ünï.txt"), []byte("u"), 0o644)
	dl := func(pairs ...string) string { return base + "/files/download" + q(pairs...) }

	call(t, "GET", dl("path", "/workspace/nope"), nil).
		expect(t, 404, "FILE_NOT_FOUND", "file not found. open /workspace/nope: no such file or directory")
	call(t, "GET", base+"/files/download", nil).expect(t, 400, "MISSING_QUERY", "missing query parameter 'path'")

	a := call(t, "GET", dl("path", "lines", "offset", "2", "limit", "2"), nil)
	if a.status != 200 || a.body != "l2\nl3" || a.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("lines: %d %q %q", a.status, a.body, a.header.Get("Content-Type"))
	}
	if a := call(t, "GET", dl("path", "lines", "offset", "3"), nil); a.body != "l3\nl4" {
		t.Errorf("offset only: %q", a.body)
	}
	call(t, "GET", dl("path", "lines", "offset", "0"), nil).expect(t, 400, "INVALID_REQUEST_BODY", "invalid query parameter 'offset': 0")
	call(t, "GET", dl("path", "lines", "limit", "1"), nil, "Range", "bytes=0-1").expect(t, 400, "INVALID_REQUEST_BODY",
		"line-based reading (offset/limit) and byte range (Range header) are mutually exclusive")

	u := call(t, "GET", dl("path", "ünï.txt"), nil)
	if want := `attachment; filename="%C3%BCn%C3%AF.txt"; filename*=UTF-8''%C3%BCn%C3%AF.txt`; u.header.Get("Content-Disposition") != want {
		t.Errorf("non-ASCII name: %q", u.header.Get("Content-Disposition"))
	}
	// execd answers a directory with a broken 200.
	call(t, "GET", dl("path", "/tmp"), nil).expect(t, 400, "INVALID_FILE", "error reading file /tmp: is a directory")
	call(t, "GET", dl("path", ""), nil).expect(t, 400, "MISSING_QUERY", "missing query parameter 'path'")
}

func TestInfo(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	os.MkdirAll(hostPath(sb, "/workspace/f"), 0o755)
	os.WriteFile(hostPath(sb, "/workspace/f/a.txt"), []byte("abc"), 0o640)
	os.Symlink("a.txt", hostPath(sb, "/workspace/f/link"))

	a := call(t, "GET", base+"/files/info"+q("path", "f/a.txt", "path", "/workspace/f/link", "path", "~"), nil)
	a.expect(t, 200)
	var got map[string]map[string]any
	if err := json.Unmarshal([]byte(a.body), &got); err != nil {
		t.Fatal(err)
	}
	file, link, home := got["f/a.txt"], got["/workspace/f/link"], got["~"]
	if file["path"] != "/workspace/f/a.txt" || file["type"] != "file" || file["size"] != 3.0 || file["mode"] != 640.0 {
		t.Errorf("file: %v", file)
	}
	if link["type"] != "symlink" || link["mode"] != 777.0 || link["size"] != 5.0 {
		t.Errorf("symlink (not followed): %v", link)
	}
	if home["path"] != "/root" || home["type"] != "directory" {
		t.Errorf("~: %v", home)
	}
	var keys []string
	dec := json.NewDecoder(strings.NewReader(a.body))
	dec.Token()
	dec.Token()
	dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if strings.Join(keys, ",") != "path,type,size,modified_at,created_at,owner,group,mode" {
		t.Errorf("FileInfo keys %v", keys)
	}

	call(t, "GET", base+"/files/info", nil).expect(t, 200)
	if b := call(t, "GET", base+"/files/info", nil).body; strings.TrimSpace(b) != "{}" {
		t.Errorf("no path: %q", b)
	}
	call(t, "GET", base+"/files/info"+q("path", "a\x00b"), nil).expect(t, 400, "INVALID_FILE", `invalid path "a\x00b"`)
	call(t, "GET", base+"/files/info"+q("path", "f/a.txt", "path", "f/nope"), nil).
		expect(t, 404, "FILE_NOT_FOUND", "file not found. file not found: /workspace/f/nope: lstat /workspace/f/nope: no such file or directory")
}

func paths(t *testing.T, body string) []string {
	t.Helper()
	var infos []fileInfo
	if err := json.Unmarshal([]byte(body), &infos); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	out := []string{}
	for _, i := range infos {
		out = append(out, i.Path)
	}
	return out
}

func tree(t *testing.T, sb *sandbox.Sandbox) {
	t.Helper()
	for _, d := range []string{"/workspace/p/sub/deeper", "/workspace/p/b"} {
		os.MkdirAll(hostPath(sb, d), 0o755)
	}
	for _, f := range []string{"/workspace/p/a.txt", "/workspace/p/sub/x.txt", "/workspace/p/sub/deeper/deep.txt", "/workspace/p/z.md"} {
		os.WriteFile(hostPath(sb, f), []byte(f), 0o644)
	}
	os.Symlink("sub", hostPath(sb, "/workspace/p/lnk"))
}

func TestSearch(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	tree(t, sb)
	search := func(pairs ...string) answer { return call(t, "GET", base+"/files/search"+q(pairs...), nil) }
	for pattern, want := range map[string]string{
		"*.txt":         "/workspace/p/a.txt /workspace/p/sub/deeper/deep.txt /workspace/p/sub/x.txt",
		"**/deep.txt":   "/workspace/p/sub/deeper/deep.txt",
		"sub/**/*.txt":  "",
		"":              "/workspace/p/a.txt /workspace/p/lnk /workspace/p/sub/deeper/deep.txt /workspace/p/sub/x.txt /workspace/p/z.md",
		"[xz].*":        "/workspace/p/sub/x.txt /workspace/p/z.md",
		"nothing-here*": "",
	} {
		a := search("path", "/workspace/p", "pattern", pattern)
		a.expect(t, 200)
		if got := strings.Join(paths(t, a.body), " "); got != want {
			t.Errorf("pattern %q: %q, want %q", pattern, got, want)
		}
	}
	if got := paths(t, search("path", "p/a.txt").body); len(got) != 1 || got[0] != "/workspace/p/a.txt" {
		t.Errorf("a file as path: %v", got)
	}
	if got := paths(t, search("path", "/", "pattern", "deep.txt").body); len(got) != 1 {
		t.Errorf("search from /: %v", got)
	}
	search("pattern", "*").expect(t, 400, "MISSING_QUERY", "missing query parameter 'path'")
	search("path", "/workspace/nope").expect(t, 404, "FILE_NOT_FOUND", "file not found. stat /workspace/nope: no such file or directory")
	// 500 on execd.
	search("path", "/workspace", "pattern", "[").expect(t, 400, "INVALID_REQUEST_BODY", "error searching files. invalid pattern [: syntax error in pattern")
}

func TestListDirectory(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	tree(t, sb)
	list := func(pairs ...string) answer { return call(t, "GET", base+"/directories/list"+q(pairs...), nil) }
	for depth, want := range map[string]string{
		"":  "a.txt b lnk sub z.md",
		"1": "a.txt b lnk sub z.md",
		"2": "a.txt b lnk sub sub/deeper sub/x.txt z.md",
		"9": "a.txt b lnk sub sub/deeper sub/deeper/deep.txt sub/x.txt z.md",
		"0": "",
	} {
		pairs := []string{"path", "/workspace/p"}
		if depth != "" {
			pairs = append(pairs, "depth", depth)
		}
		a := list(pairs...)
		a.expect(t, 200)
		got := strings.ReplaceAll(strings.Join(paths(t, a.body), " "), "/workspace/p/", "")
		if got != want {
			t.Errorf("depth %q: %q, want %q", depth, got, want)
		}
	}
	if got := strings.Join(paths(t, list("path", "/").body), " "); got != "/home /root /tmp /workspace" {
		t.Errorf("list /: %q", got)
	}
	list("path", "p", "depth", "-1").expect(t, 400, "INVALID_REQUEST_BODY", "invalid query parameter 'depth': -1")
	list("path", "p/lnk").expect(t, 400, "INVALID_REQUEST_BODY", "path is a symbolic link, refusing to traverse: /workspace/p/lnk")
	list("path", "p/a.txt").expect(t, 400, "INVALID_REQUEST_BODY", "path is not a directory: /workspace/p/a.txt")
	list("path", "p/nope").expect(t, 404)
	list().expect(t, 400, "MISSING_QUERY", "missing query parameter 'path'")
}

func TestMkdirAndRemove(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	os.MkdirAll(hostPath(sb, "/workspace/old"), 0o700)
	call(t, "POST", base+"/directories", map[string]any{
		"new/a/b":        map[string]any{"mode": 750},
		"/workspace/old": map[string]any{"mode": 777},
		"/tmp/plain":     map[string]any{},
	}).expect(t, 200)
	for p, want := range map[string]os.FileMode{"/workspace/new/a/b": 0o750, "/workspace/new/a": 0o755, "/workspace/old": 0o700, "/tmp/plain": 0o755} {
		if fi, err := os.Stat(hostPath(sb, p)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi, err, want)
		}
	}
	os.WriteFile(hostPath(sb, "/workspace/file"), nil, 0o644)
	// 500 on execd, for both; here nothing is created.
	call(t, "POST", base+"/directories", map[string]any{"file/sub": map[string]any{}}).
		expect(t, 400, "INVALID_FILE", "error accessing file: mkdir /workspace/file/sub: not a directory")
	call(t, "POST", base+"/directories", map[string]any{"made": map[string]any{"owner": "no-such-user-osb"}}).
		expect(t, 400, "INVALID_REQUEST_BODY", "invalid permission for made: failed to lookup user no-such-user-osb: user: unknown user no-such-user-osb")
	if _, err := os.Lstat(hostPath(sb, "/workspace/made")); !os.IsNotExist(err) {
		t.Errorf("a refused mkdir made the directory: %v", err)
	}
	call(t, "POST", base+"/directories", []string{"x"}).expect(t, 400)

	// DELETE /directories: recursive, missing fine, a plain file deleted too.
	call(t, "DELETE", base+"/directories"+q("path", "new", "path", "nope", "path", "file"), nil).expect(t, 200)
	for _, p := range []string{"/workspace/new", "/workspace/file"} {
		if _, err := os.Lstat(hostPath(sb, p)); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	call(t, "DELETE", base+"/directories"+q("path", "/workspace"), nil).expect(t, 400, "INVALID_FILE", "error removing directory /workspace: it is a mount point of the sandbox")
	if _, err := os.Stat(hostPath(sb, "/workspace/old")); err != nil {
		t.Errorf("refusing to remove /workspace removed its content: %v", err)
	}

	// DELETE /files: missing fine, a directory refused (500 on execd).
	os.WriteFile(hostPath(sb, "/workspace/f1"), nil, 0o644)
	call(t, "DELETE", base+"/files"+q("path", "f1", "path", "missing"), nil).expect(t, 200)
	if _, err := os.Lstat(hostPath(sb, "/workspace/f1")); !os.IsNotExist(err) {
		t.Errorf("f1 not deleted: %v", err)
	}
	call(t, "DELETE", base+"/files"+q("path", "old"), nil).
		expect(t, 400, "INVALID_FILE", "error removing file /workspace/old: path is a directory: /workspace/old")
	call(t, "DELETE", base+"/files", nil).expect(t, 200)
}

func TestMove(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	os.WriteFile(hostPath(sb, "/workspace/a"), []byte("A"), 0o644)
	os.WriteFile(hostPath(sb, "/workspace/b"), []byte("B"), 0o644)
	call(t, "POST", base+"/files/mv", []map[string]string{{"src": "a", "dest": "/tmp/x/y/a2"}}).expect(t, 200)
	if b, _ := os.ReadFile(hostPath(sb, "/tmp/x/y/a2")); string(b) != "A" {
		t.Errorf("moved content %q", b)
	}
	os.WriteFile(hostPath(sb, "/workspace/c"), []byte("C"), 0o644)
	call(t, "POST", base+"/files/mv", []map[string]string{{"src": "c", "dest": "b"}}).
		expect(t, 409, "RUNTIME_ERROR", "error accessing file: destination path already exists: /workspace/b") // 500 on execd
	if b, _ := os.ReadFile(hostPath(sb, "/workspace/b")); string(b) != "B" {
		t.Errorf("destination overwritten: %q", b)
	}
	call(t, "POST", base+"/files/mv", []map[string]string{{"src": "nope", "dest": "z"}}).
		expect(t, 404, "FILE_NOT_FOUND", "file not found. source path not found: /workspace/nope")
	call(t, "POST", base+"/files/mv", map[string]string{"src": "b", "dest": "z"}).expect(t, 400)
	call(t, "POST", base+"/files/mv", []string{}).expect(t, 200)
}

func TestReplaceAndPermissions(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	f := hostPath(sb, "/workspace/conf")
	os.WriteFile(f, []byte("host=localhost port=1 host=localhost"), 0o600)
	a := call(t, "POST", base+"/files/replace?verbose=true", map[string]any{"conf": map[string]string{"old": "localhost", "new": "0.0.0.0"}})
	a.expect(t, 200)
	if strings.TrimSpace(a.body) != `{"conf":{"replacedCount":2}}` {
		t.Errorf("verbose: %s", a.body)
	}
	if b, _ := os.ReadFile(f); string(b) != "host=0.0.0.0 port=1 host=0.0.0.0" {
		t.Errorf("replaced: %q", b)
	}
	if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode not kept: %v", fi.Mode())
	}
	if a := call(t, "POST", base+"/files/replace", map[string]any{"conf": map[string]string{"old": "port", "new": "p"}}); a.status != 200 || a.body != "" {
		t.Errorf("not verbose: %d %q", a.status, a.body)
	}
	call(t, "POST", base+"/files/replace", map[string]any{"conf": map[string]string{"old": "", "new": "x"}}).
		expect(t, 400, "INVALID_REQUEST_BODY", "old content must not be empty")
	call(t, "POST", base+"/files/replace", map[string]any{"nope": map[string]string{"old": "a", "new": "b"}}).expect(t, 404)

	perm := func(body any) answer { return call(t, "POST", base+"/files/permissions", body) }
	perm(map[string]any{"conf": map[string]any{"mode": 4755}}).expect(t, 200)
	if fi, _ := os.Stat(f); fi.Mode() != 0o755 {
		t.Errorf("4755 gave %v, want special bits dropped", fi.Mode())
	}
	perm(map[string]any{"conf": map[string]any{"mode": 0}}).expect(t, 200)
	if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode 0 changed the mode: %v", fi.Mode())
	}
	// execd answers the next three with 500, after changing what came
	// before the bad entry; here nothing changes.
	perm(map[string]any{"conf": map[string]any{"mode": 888}}).
		expect(t, 400, "INVALID_REQUEST_BODY", "invalid permission for conf: invalid mode 888: not octal digits")
	perm(map[string]any{"conf": map[string]any{"mode": 600}, "nope": map[string]any{"mode": 644}}).
		expect(t, 404, "FILE_NOT_FOUND", "file not found. chmod /workspace/nope: no such file or directory")
	perm(map[string]any{"conf": map[string]any{"mode": 600}, "x": map[string]any{"mode": 644, "owner": "no-such-user-osb"}}).
		expect(t, 400, "INVALID_REQUEST_BODY", "invalid permission for x: failed to lookup user no-such-user-osb: user: unknown user no-such-user-osb")
	if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o755 {
		t.Errorf("a refused request changed the mode: %v", fi.Mode())
	}
	perm(map[string]any{"conf": map[string]any{"mode": "644"}}).expect(t, 400)
}

// TestPathsCannotEscape checks that no request reaches a file outside the
// sandbox: not through "..", an absolute path, nor a symlink.
func TestPathsCannotEscape(t *testing.T) {
	t.Parallel()
	sb, base := fileServer(t)
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("host secret"), 0o644)
	os.Symlink(outside, hostPath(sb, "/workspace/abs-link"))
	rel, _ := filepath.Rel(hostPath(sb, "/workspace"), outside)
	os.Symlink(rel, hostPath(sb, "/workspace/rel-link"))
	os.Symlink(filepath.Dir(outside), hostPath(sb, "/workspace/dir-link"))
	os.Symlink("/etc", hostPath(sb, "/workspace/etc-link"))

	for _, p := range []string{"../../etc/passwd", "/etc/passwd", "/workspace/../../etc/passwd", "abs-link", "rel-link", "dir-link/secret", "etc-link/passwd"} {
		t.Run(p, func(t *testing.T) {
			a := call(t, "GET", base+"/files/download"+q("path", p), nil)
			if a.status != 400 || strings.Contains(a.body, "host secret") || strings.Contains(a.body, "root:") {
				t.Errorf("download: %d %s", a.status, a.body)
			}
			upload(t, base, meta(p, 644), content("overwritten")).expect(t, 400)
			call(t, "GET", base+"/files/search"+q("path", p), nil).expect(t, 400)
			call(t, "POST", base+"/files/replace", map[string]any{p: map[string]string{"old": "host", "new": "x"}}).expect(t, 400)
			call(t, "POST", base+"/files/permissions", map[string]any{p: map[string]any{"mode": 777}}).expect(t, 400)
		})
	}
	upload(t, base, meta("dir-link/new-file", 644), content("x")).expect(t, 400)
	call(t, "POST", base+"/directories", map[string]any{"dir-link/newdir": map[string]any{}}).expect(t, 400)
	call(t, "POST", base+"/files/mv", []map[string]string{{"src": "dir-link/secret", "dest": "stolen"}}).
		expect(t, 400, "INVALID_FILE", "/workspace/dir-link/secret: a symbolic link on this path leads outside the sandbox filesystem")
	call(t, "POST", base+"/files/mv", []map[string]string{{"src": "abs-link", "dest": "dir-link/x"}}).
		expect(t, 400, "INVALID_FILE", "/workspace/dir-link/x: a symbolic link on this path leads outside the sandbox filesystem")
	call(t, "DELETE", base+"/files"+q("path", "dir-link/secret"), nil).expect(t, 400)
	call(t, "DELETE", base+"/directories"+q("path", "/etc"), nil).expect(t, 400)

	if b, err := os.ReadFile(outside); err != nil || string(b) != "host secret" {
		t.Fatalf("the outside file changed: %q %v", b, err)
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() != 0o644 {
		t.Errorf("outside mode changed: %v", fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(outside))
	if len(entries) != 1 {
		t.Errorf("files appeared outside: %v", entries)
	}
	// The links themselves are sandbox files: they can be described and removed.
	call(t, "GET", base+"/files/info"+q("path", "abs-link"), nil).expect(t, 200)
	call(t, "DELETE", base+"/files"+q("path", "abs-link"), nil).expect(t, 200)
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("removing the link removed its target: %v", err)
	}
}

// TestSystemFilesAreReadable checks that an isolated sandbox's files outside
// its own areas read as its processes see them (the official SDKs read
// /etc/os-release), its execd running inside it; writes to its read-only
// parts fail as the kernel says, and an unisolated sandbox shows nothing of
// the host.
func TestSystemFilesAreReadable(t *testing.T) {
	t.Parallel()
	if !sandbox.Probe().Available {
		t.Skip("no namespaces here: " + sandbox.Probe().Reason)
	}
	want, err := os.ReadFile("/etc/os-release")
	if err != nil {
		t.Skip("this host has no /etc/os-release")
	}
	sb := startSandbox(t, true)
	srv := httptest.NewServer(handlerFor(sb, Options{}))
	t.Cleanup(srv.Close)

	got := call(t, "GET", srv.URL+"/files/download"+q("path", "/etc/os-release"), nil)
	if got.status != 200 || got.body != string(want) {
		t.Fatalf("download /etc/os-release: %d %q", got.status, got.body)
	}
	info := call(t, "GET", srv.URL+"/files/info"+q("path", "/etc/os-release"), nil)
	if info.status != 200 || !strings.Contains(info.body, `"path":"/etc/os-release"`) {
		t.Errorf("info /etc/os-release: %d %s", info.status, info.body)
	}
	call(t, "GET", srv.URL+"/files/download"+q("path", "/etc"), nil).
		expect(t, 400, "INVALID_FILE", "error reading file /etc: is a directory")
	upload(t, srv.URL, meta("/etc/osb-written", 644), content("x")).
		expect(t, 500, "RUNTIME_ERROR", "error opening destination file /etc/osb-written: read-only file system")
	upload(t, srv.URL, meta("/usr/osb-written", 644), content("x")).
		expect(t, 500, "RUNTIME_ERROR", "error opening destination file /usr/osb-written: read-only file system")
	if _, err := os.Stat("/usr/osb-written"); err == nil {
		os.Remove("/usr/osb-written")
		t.Fatal("an upload to /usr wrote the host's /usr")
	}
	if _, err := os.Stat("/etc/osb-written"); err == nil {
		os.Remove("/etc/osb-written")
		t.Fatal("an upload to /etc wrote the host's /etc")
	}

	_, plain := fileServer(t)
	call(t, "GET", plain+"/files/download"+q("path", "/etc/os-release"), nil).
		expect(t, 400, "INVALID_FILE", "path is outside the sandbox filesystem (only /workspace, /tmp, /root and /home are sandbox files): /etc/os-release")
}
