package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"strconv"
)

// FileInfo is execd's description of one file. Mode holds the octal
// permission digits read as a decimal number (644 means rw-r--r--).
type FileInfo struct {
	Path       string `json:"path"`
	Type       string `json:"type"` // file, directory, symlink or other
	Size       int64  `json:"size"`
	ModifiedAt Time   `json:"modified_at"`
	CreatedAt  Time   `json:"created_at"`
	Owner      string `json:"owner"`
	Group      string `json:"group"`
	Mode       int    `json:"mode"`
}

// Permission is the mode and ownership to give a file or directory. Mode 0
// leaves the mode alone; nil owner or group leaves them alone.
type Permission struct {
	Owner *string `json:"owner"`
	Group *string `json:"group"`
	Mode  int     `json:"mode"`
}

// FileMetadata says where an uploaded file goes and what it becomes.
type FileMetadata struct {
	Path  string  `json:"path"`
	Owner *string `json:"owner"`
	Group *string `json:"group"`
	Mode  int     `json:"mode"`
}

// Move renames Src to Dest.
type Move struct {
	Src  string `json:"src"`
	Dest string `json:"dest"`
}

// Replacement replaces every Old with New in a file.
type Replacement struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// Download is an open file download. Size is the Content-Length, or -1 when
// the server did not say.
type Download struct {
	Body io.ReadCloser
	Size int64
}

// Download opens a file for reading. Only waiting for the headers is
// bounded; the caller reads Body at its own pace and closes it.
func (d *DataPlane) Download(ctx context.Context, remote string) (*Download, error) {
	return d.DownloadRange(ctx, remote, "")
}

// DownloadRange is Download of part of a file: byteRange is an HTTP Range
// header value ("bytes=0-1023"), sent as given; "" reads the whole file.
func (d *DataPlane) DownloadRange(ctx context.Context, remote, byteRange string) (*Download, error) {
	req := &Request{Method: http.MethodGet, Path: "/files/download", Query: url.Values{"path": {remote}}}
	if byteRange != "" {
		req.Header = http.Header{"Range": {byteRange}}
	}
	resp, err := d.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength == impossibleSize {
		resp.Body.Close()
		return nil, d.notAFile(ctx, remote)
	}
	return &Download{Body: resp.Body, Size: resp.ContentLength}, nil
}

// impossibleSize is the Content-Length execd announces for a directory
// (its "size" as a seek to the end reports it), before breaking off the
// connection: no file holds that many bytes.
const impossibleSize = math.MaxInt64

// notAFile explains a download answered with impossibleSize: execd's
// answer for a directory, which its file description confirms.
func (d *DataPlane) notAFile(ctx context.Context, remote string) error {
	info, err := d.FileInfo(ctx, []string{remote})
	switch fi, ok := info[remote]; {
	case err != nil || !ok || fi.Type == "file":
	case fi.Type == "directory":
		return fmt.Errorf("cannot download %s: it is a directory, not a file", remote)
	default:
		return fmt.Errorf("cannot download %s: it is not a file (type %s)", remote, fi.Type)
	}
	return fmt.Errorf("cannot download %s: the server announced %d bytes, more than any file holds", remote, int64(impossibleSize))
}

// Upload streams content to meta.Path. The multipart body is the two part
// headers, then content as it is read, then the closing boundary: memory
// stays flat whatever the size. size is content's length, or -1 when
// unknown (the body is then sent chunked). execd only sees parts that carry
// a filename, so both parts get one.
func (d *DataPlane) Upload(ctx context.Context, meta FileMetadata, content io.Reader, size int64) error {
	head, tail, contentType, err := uploadFrame(meta)
	if err != nil {
		return err
	}
	body := io.MultiReader(bytes.NewReader(head), localReader{content}, bytes.NewReader(tail))
	req := &Request{Method: http.MethodPost, Path: "/files/upload", Body: body, ContentType: contentType}
	if size >= 0 {
		req.BodyLength = int64(len(head)) + size + int64(len(tail))
	}
	resp, err := d.Stream(ctx, req)
	if err != nil {
		var local *uploadReadError
		if errors.As(err, &local) {
			return local
		}
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// uploadFrame renders what surrounds the file content in an upload body:
// the metadata part and the file part's header, then the closing boundary.
func uploadFrame(meta FileMetadata) (head, tail []byte, contentType string, err error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mpart, err := mw.CreatePart(filePartHeader("metadata", "metadata", "application/json"))
	if err != nil {
		return nil, nil, "", err
	}
	if err := json.NewEncoder(mpart).Encode(meta); err != nil {
		return nil, nil, "", err
	}
	name := path.Base(meta.Path)
	if name == "/" || name == "." {
		name = "file"
	}
	if _, err := mw.CreatePart(filePartHeader("file", name, "application/octet-stream")); err != nil {
		return nil, nil, "", err
	}
	n := b.Len()
	if err := mw.Close(); err != nil {
		return nil, nil, "", err
	}
	all := b.Bytes()
	return all[:n], all[n:], mw.FormDataContentType(), nil
}

// uploadReadError is a failure to read the local content of an upload.
type uploadReadError struct{ err error }

func (e *uploadReadError) Error() string { return "cannot read the upload content: " + e.err.Error() }
func (e *uploadReadError) Unwrap() error { return e.err }

// localReader marks read failures of the local content, so they are not
// mistaken for the request failing.
type localReader struct{ r io.Reader }

func (l localReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if err != nil && err != io.EOF {
		err = &uploadReadError{err}
	}
	return n, err
}

func filePartHeader(name, filename, contentType string) textproto.MIMEHeader {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, name, escapeQuotes(filename)))
	h.Set("Content-Type", contentType)
	return h
}

func escapeQuotes(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\r', '\n':
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// FileInfo fetches the description of each path. The answer is keyed by the
// path exactly as given.
func (d *DataPlane) FileInfo(ctx context.Context, paths []string) (map[string]FileInfo, error) {
	out := map[string]FileInfo{}
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/files/info", Query: url.Values{"path": paths}}, &out)
	return out, err
}

// DeleteFiles removes files; missing ones are not an error, directories are.
func (d *DataPlane) DeleteFiles(ctx context.Context, paths []string) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodDelete, Path: "/files", Query: url.Values{"path": paths}}, nil)
	return err
}

// MoveFiles renames files or directories. execd never overwrites a destination.
func (d *DataPlane) MoveFiles(ctx context.Context, moves []Move) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodPost, Path: "/files/mv", JSON: moves}, nil)
	return err
}

// CreateDirectories makes each directory with its parents (mkdir -p).
func (d *DataPlane) CreateDirectories(ctx context.Context, dirs map[string]Permission) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodPost, Path: "/directories", JSON: dirs}, nil)
	return err
}

// DeleteDirectories removes each path and everything below it (rm -rf).
func (d *DataPlane) DeleteDirectories(ctx context.Context, paths []string) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodDelete, Path: "/directories", Query: url.Values{"path": paths}}, nil)
	return err
}

// SearchFiles lists the files below dir whose base name matches pattern.
func (d *DataPlane) SearchFiles(ctx context.Context, dir, pattern string) ([]FileInfo, error) {
	var out []FileInfo
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/files/search", Query: url.Values{"path": {dir}, "pattern": {pattern}}}, &out)
	return out, err
}

// ListDirectory lists dir down to depth levels (1: its children only).
func (d *DataPlane) ListDirectory(ctx context.Context, dir string, depth int) ([]FileInfo, error) {
	var out []FileInfo
	q := url.Values{"path": {dir}, "depth": {strconv.Itoa(depth)}}
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/directories/list", Query: q}, &out)
	return out, err
}

// SetPermissions changes the mode and ownership of each path.
func (d *DataPlane) SetPermissions(ctx context.Context, perms map[string]Permission) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodPost, Path: "/files/permissions", JSON: perms}, nil)
	return err
}

// ReplaceContent replaces text in each file.
func (d *DataPlane) ReplaceContent(ctx context.Context, edits map[string]Replacement) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodPost, Path: "/files/replace", JSON: edits}, nil)
	return err
}

// ReplaceContentCounted replaces text in each file and returns how many
// replacements each file got, keyed by path as given. An execd too old to
// count answers with an empty body: the map is then empty.
func (d *DataPlane) ReplaceContentCounted(ctx context.Context, edits map[string]Replacement) (map[string]int, error) {
	var out map[string]struct {
		Count int `json:"replacedCount"`
	}
	q := url.Values{"verbose": {"true"}}
	if _, err := d.Do(ctx, &Request{Method: http.MethodPost, Path: "/files/replace", Query: q, JSON: edits}, &out); err != nil {
		return nil, err
	}
	counts := make(map[string]int, len(out))
	for p, r := range out {
		counts[p] = r.Count
	}
	return counts, nil
}
