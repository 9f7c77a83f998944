package client

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dataPlaneTo returns a data plane whose endpoint is h, reached through a
// lifecycle lookup that hands out a path prefix and a header.
func dataPlaneTo(t *testing.T, h http.HandlerFunc) *DataPlane {
	t.Helper()
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			w.Write([]byte(`{"endpoint":"` + r.Host + `/gw","headers":{"X-Gate":"g1"}}`))
			return
		}
		if r.Header.Get("X-Gate") != "g1" || !strings.HasPrefix(r.URL.Path, "/gw/") {
			http.Error(w, "no endpoint header or prefix", http.StatusForbidden)
			return
		}
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/gw")
		h(w, r)
	})
	dp, err := c.DataPlane(context.Background(), "sb", PortExecd)
	if err != nil {
		t.Fatal(err)
	}
	return dp
}

type seenPart struct {
	name, filename, contentType, body string
}

// TestUploadWire checks the multipart body execd needs: a metadata part
// that is a file part holding the JSON, then the file part.
func TestUploadWire(t *testing.T) {
	var parts []seenPart
	var ct string
	var length int64
	dp := dataPlaneTo(t, func(w http.ResponseWriter, r *http.Request) {
		ct = r.Header.Get("Content-Type")
		length = r.ContentLength
		mr, err := r.MultipartReader()
		if err != nil {
			t.Error(err)
			return
		}
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			parts = append(parts, seenPart{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(b)})
		}
	})
	owner := "app"
	err := dp.Upload(context.Background(), FileMetadata{Path: "/workspace/dir/a.bin", Mode: 640, Owner: &owner}, strings.NewReader("\x00\xffdata"), 6)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _, _ := mime.ParseMediaType(ct); mt != "multipart/form-data" {
		t.Errorf("Content-Type %q", ct)
	}
	if length <= 6 {
		t.Errorf("Content-Length %d: a known size must give a whole-body length, not chunks", length)
	}
	want := []seenPart{
		{"metadata", "metadata", "application/json", `{"path":"/workspace/dir/a.bin","owner":"app","group":null,"mode":640}` + "\n"},
		{"file", "a.bin", "application/octet-stream", "\x00\xffdata"},
	}
	if len(parts) != 2 || parts[0] != want[0] || parts[1] != want[1] {
		t.Errorf("parts:\n%q\nwant\n%q", parts, want)
	}
}

// gatedReader gives its first chunk, then waits for open before the rest:
// an upload that buffered the whole body before sending would never let
// the server see the first chunk.
type gatedReader struct {
	first, rest string
	open        chan struct{}
	step        int
}

func (g *gatedReader) Read(p []byte) (int, error) {
	switch g.step++; g.step {
	case 1:
		return copy(p, g.first), nil
	case 2:
		select {
		case <-g.open:
		case <-time.After(time.Minute):
			return 0, errors.New("the server never saw the first chunk: the body is not streamed")
		}
		return copy(p, g.rest), nil
	}
	return 0, io.EOF
}

func TestUploadStreams(t *testing.T) {
	g := &gatedReader{first: "first-chunk|", rest: "rest", open: make(chan struct{})}
	var got string
	var chunked bool
	dp := dataPlaneTo(t, func(w http.ResponseWriter, r *http.Request) {
		chunked = r.ContentLength == -1 && len(r.TransferEncoding) == 1 && r.TransferEncoding[0] == "chunked"
		mr, _ := r.MultipartReader()
		mr.NextPart() // metadata
		p, _ := mr.NextPart()
		buf := make([]byte, len(g.first))
		io.ReadFull(p, buf)
		close(g.open)
		rest, _ := io.ReadAll(p)
		got = string(buf) + string(rest)
	})
	if err := dp.Upload(context.Background(), FileMetadata{Path: "f", Mode: 755}, g, -1); err != nil {
		t.Fatal(err)
	}
	if got != "first-chunk|rest" || !chunked {
		t.Errorf("server got %q (chunked: %v, want true for an unknown size)", got, chunked)
	}
}

type brokenReader struct{}

func (brokenReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// A failure reading the local content is reported as such, not as the
// server being unreachable.
func TestUploadReadError(t *testing.T) {
	dp := dataPlaneTo(t, func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
	err := dp.Upload(context.Background(), FileMetadata{Path: "f"}, brokenReader{}, 10)
	var conn *ConnError
	if err == nil || errors.As(err, &conn) || !strings.Contains(err.Error(), "cannot read the upload content: disk on fire") {
		t.Fatalf("got %T %v", err, err)
	}
}

// An error answer before the body is read ends the upload with that error.
func TestUploadRejected(t *testing.T) {
	dp := dataPlaneTo(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"code":"INVALID_FILE_METADATA","message":"metadata file is missing"}`))
	})
	err := dp.Upload(context.Background(), FileMetadata{Path: "f"}, strings.NewReader(strings.Repeat("x", 8<<20)), 8<<20)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "INVALID_FILE_METADATA" {
		t.Fatalf("got %T %v", err, err)
	}
}

func TestDownloadAndFileCalls(t *testing.T) {
	var seen []string
	dp := dataPlaneTo(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+string(body))
		switch r.URL.Path {
		case "/files/download":
			w.Header().Set("Content-Length", "3")
			w.Write([]byte("abc"))
		case "/files/info":
			w.Write([]byte(`{"a b":{"path":"/workspace/a b","type":"file","size":3,"mode":644,"owner":"root","group":"root","modified_at":"2026-01-02T03:04:05.123456789Z","created_at":"2026-01-02T03:04:05Z"}}`))
		case "/files/search", "/directories/list":
			w.Write([]byte(`[]`))
		}
	})
	ctx := context.Background()
	dl, err := dp.Download(ctx, "a b")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if string(b) != "abc" || dl.Size != 3 {
		t.Errorf("download %q size %d", b, dl.Size)
	}
	info, err := dp.FileInfo(ctx, []string{"a b", "c"})
	if err != nil || info["a b"].Mode != 644 || info["a b"].Type != "file" || info["a b"].ModifiedAt.T.Nanosecond() != 123456789 {
		t.Errorf("info %+v %v", info, err)
	}
	mode := 700
	calls := []error{
		dp.DeleteFiles(ctx, []string{"x", "y"}),
		dp.DeleteDirectories(ctx, []string{"d"}),
		dp.MoveFiles(ctx, []Move{{Src: "a", Dest: "b"}}),
		dp.CreateDirectories(ctx, map[string]Permission{"d": {Mode: mode}}),
		dp.SetPermissions(ctx, map[string]Permission{"f": {Mode: 644}}),
		dp.ReplaceContent(ctx, map[string]Replacement{"f": {Old: "o", New: "n"}}),
	}
	_, err1 := dp.SearchFiles(ctx, "/w", "*.py")
	_, err2 := dp.ListDirectory(ctx, "/w", 2)
	for _, err := range append(calls, err1, err2) {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"GET /files/download?path=a+b ",
		"GET /files/info?path=a+b&path=c ",
		"DELETE /files?path=x&path=y ",
		"DELETE /directories?path=d ",
		`POST /files/mv? [{"src":"a","dest":"b"}]`,
		`POST /directories? {"d":{"owner":null,"group":null,"mode":700}}`,
		`POST /files/permissions? {"f":{"owner":null,"group":null,"mode":644}}`,
		`POST /files/replace? {"f":{"old":"o","new":"n"}}`,
		"GET /files/search?path=%2Fw&pattern=%2A.py ",
		"GET /directories/list?depth=2&path=%2Fw ",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}
