package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
)

func fileTools() []toolSpec {
	return []toolSpec{
		{name: "file_read", readOnly: true, add: handler((*Server).readFile),
			desc: "Read a text file from a sandbox. For a large file, read it in parts with range_header."},
		{name: "file_write", destructive: true, add: handler((*Server).writeFile),
			desc: "Write a text file in a sandbox, replacing it if it exists; missing parent directories are created."},
		{name: "file_delete", destructive: true, add: handler((*Server).deleteFiles),
			desc: "Delete files in a sandbox (not directories: use file_delete_directories)."},
		{name: "file_search", readOnly: true, add: handler((*Server).searchFiles),
			desc: "Find the files below a directory whose name matches a glob pattern such as \"*.py\"."},
		{name: "file_create_directories", add: handler((*Server).createDirectories),
			desc: "Create directories, with their parents, in a sandbox."},
		{name: "file_delete_directories", destructive: true, add: handler((*Server).deleteDirectories),
			desc: "Delete directories and everything in them."},
		{name: "file_move", destructive: true, add: handler((*Server).moveFiles),
			desc: "Move or rename files and directories in a sandbox."},
		{name: "file_replace_contents", destructive: true, add: handler((*Server).replaceContents),
			desc: "Replace every occurrence of a text in files, and tell how many replacements each file got."},
	}
}

type readArgs struct {
	target
	Path        string  `json:"path" jsonschema:"File to read."`
	Encoding    string  `json:"encoding,omitempty" default:"utf-8" jsonschema:"Text encoding of the file: utf-8, latin-1 or ascii."`
	RangeHeader *string `json:"range_header,omitempty" jsonschema:"Part of the file to read, as an HTTP Range value, e.g. \"bytes=0-1023\"."`
}

type fileText struct {
	Path      string      `json:"path"`
	Content   string      `json:"content"`
	Truncated *truncation `json:"truncated,omitempty"`
}

func (s *Server) readFile(ctx context.Context, _ *mcp.CallToolRequest, a readArgs) (*fileText, error) {
	codec, err := textCodec(a.Encoding)
	if err != nil {
		return nil, err
	}
	b := s.serverBudget()
	part, err := s.download(ctx, a.target, a.Path, a.RangeHeader, b.bytes)
	if err != nil {
		return nil, err
	}
	if part.more && codec.name == "utf-8" {
		part.data = trimPartialRune(part.data)
	}
	text, err := codec.decode(part.data)
	if err != nil {
		return nil, usage("%s is not %s text: %v", a.Path, codec.name, err)
	}
	fits := fitFront(text, b.bytes)
	kept := fits // bytes of the file: one per character but in UTF-8
	if codec.name != "utf-8" {
		kept = utf8.RuneCountInString(text[:fits])
	}
	return &fileText{Path: a.Path, Content: text[:fits], Truncated: part.keep(kept, b)}, nil
}

// filePart is what download read of a file or of a range of it.
type filePart struct {
	data  []byte
	more  bool  // the file or range goes on past data
	size  int64 // bytes the server announced (-1: not said)
	start int64 // the offset of data[0] in the file
}

// download reads a file, or the part byteRange names, up to max bytes:
// JSON text is never shorter than the bytes it carries, so no more can fit
// in a budget of max.
func (s *Server) download(ctx context.Context, t target, path string, byteRange *string, max int) (*filePart, error) {
	if path == "" {
		return nil, usage("path must not be empty")
	}
	dp, err := s.execd(ctx, t)
	if err != nil {
		return nil, err
	}
	rng := ""
	if byteRange != nil {
		rng = *byteRange
	}
	dl, err := dp.DownloadRange(ctx, path, rng)
	if err != nil {
		return nil, err
	}
	defer dl.Body.Close()
	data, err := io.ReadAll(io.LimitReader(dl.Body, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	p := &filePart{data: data, size: dl.Size, start: rangeStart(rng)}
	if len(data) > max {
		p.data, p.more = data[:max], true
	}
	return p, nil
}

// keep cuts the part to its first n bytes and, when that leaves any of
// it out, says so: how much, which limit, and the range that reads on.
func (p *filePart) keep(n int, b budget) *truncation {
	n = min(n, len(p.data))
	if n == len(p.data) && !p.more {
		return nil
	}
	p.data = p.data[:n]
	t := &truncation{Limit: b.bytes}
	if p.size > 0 {
		t.OmittedBytes = p.size - int64(n)
	}
	next := p.start + int64(n)
	t.Note = fmt.Sprintf("the content is longer than %s: only bytes %d to %d were returned; "+
		"read on with range_header \"bytes=%d-\"", b, p.start, next-1, next)
	return t
}

// rangeStart is the first byte of a "bytes=N-..." range, 0 otherwise.
func rangeStart(rng string) int64 {
	spec, ok := strings.CutPrefix(strings.TrimSpace(rng), "bytes=")
	if !ok {
		return 0
	}
	first, _, _ := strings.Cut(spec, "-")
	n, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// trimPartialRune drops an incomplete UTF-8 character at the end of a cut.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// codec turns file bytes into text and back.
type codec struct {
	name   string
	decode func([]byte) (string, error)
	encode func(string) ([]byte, error)
}

// textCodec supports the encodings agents use; the official server takes
// any Python codec name.
func textCodec(name string) (codec, error) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-") {
	case "utf-8", "utf8", "":
		return codec{name: "utf-8", decode: decodeUTF8, encode: func(s string) ([]byte, error) { return []byte(s), nil }}, nil
	case "latin-1", "latin1", "iso-8859-1", "iso8859-1":
		return singleByte("latin-1", 256), nil
	case "ascii", "us-ascii":
		return singleByte("ascii", 128), nil
	}
	return codec{}, usage("unsupported encoding %q: use utf-8, latin-1 or ascii", name)
}

func decodeUTF8(b []byte) (string, error) {
	if !utf8.Valid(b) {
		return "", fmt.Errorf("invalid UTF-8 (try encoding latin-1)")
	}
	return string(b), nil
}

// singleByte is an encoding whose characters are the ones numbered below
// limit, one byte each: latin-1 (256) and ascii (128, the only one with
// bytes it cannot decode).
func singleByte(name string, limit rune) codec {
	decode := func(b []byte) (string, error) {
		r := make([]rune, len(b))
		for i, c := range b {
			if rune(c) >= limit {
				return "", fmt.Errorf("byte %#x at offset %d is not ASCII", c, i)
			}
			r[i] = rune(c)
		}
		return string(r), nil
	}
	encode := func(s string) ([]byte, error) {
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r >= limit {
				return nil, fmt.Errorf("character %q cannot be encoded", r)
			}
			out = append(out, byte(r))
		}
		return out, nil
	}
	return codec{name: name, decode: decode, encode: encode}
}

type writeArgs struct {
	target
	Path     string `json:"path" jsonschema:"File to write."`
	Content  string `json:"content" jsonschema:"The whole text of the file."`
	Encoding string `json:"encoding,omitempty" default:"utf-8" jsonschema:"Text encoding to write: utf-8, latin-1 or ascii."`
	Mode     int    `json:"mode,omitempty" default:"755" jsonschema:"Permissions as octal digits written as a number, e.g. 644."`
	owners
}

// owners is who a written file or a created directory belongs to.
type owners struct {
	Owner *string `json:"owner,omitempty" jsonschema:"Owner user name."`
	Group *string `json:"group,omitempty" jsonschema:"Group name."`
}

func (s *Server) writeFile(ctx context.Context, _ *mcp.CallToolRequest, a writeArgs) (*status, error) {
	codec, err := textCodec(a.Encoding)
	if err != nil {
		return nil, err
	}
	data, err := codec.encode(a.Content)
	if err != nil {
		return nil, usage("content cannot be written as %s: %v", codec.name, err)
	}
	meta := client.FileMetadata{Path: a.Path, Mode: a.Mode, Owner: a.Owner, Group: a.Group}
	if err := s.upload(ctx, a.target, meta, data); err != nil {
		return nil, err
	}
	return &status{Status: "written"}, nil
}

// upload writes data to the file meta names.
func (s *Server) upload(ctx context.Context, t target, meta client.FileMetadata, data []byte) error {
	if meta.Path == "" {
		return usage("path must not be empty")
	}
	if err := checkMode(meta.Mode); err != nil {
		return err
	}
	dp, err := s.execd(ctx, t)
	if err != nil {
		return err
	}
	return dp.Upload(ctx, meta, bytes.NewReader(data), int64(len(data)))
}

// checkMode accepts permissions written as octal digits (755).
func checkMode(mode int) error {
	if _, err := strconv.ParseUint(strconv.Itoa(mode), 8, 32); err != nil || mode < 0 || mode > 7777 {
		return usage("mode must be octal permission digits such as 644 or 755, got %d", mode)
	}
	return nil
}

type pathsArgs struct {
	target
	Paths []string `json:"paths" jsonschema:"Files to delete."`
}

// dirsArgs are file_delete_directories' pathsArgs.
type dirsArgs struct {
	target
	Paths []string `json:"paths" jsonschema:"Directories to delete, with everything in them."`
}

func (a pathsArgs) check() error {
	if len(a.Paths) == 0 {
		return usage("paths must name at least one path")
	}
	for _, p := range a.Paths {
		if p == "" {
			return usage("paths must not contain an empty path")
		}
	}
	return nil
}

func (s *Server) deleteFiles(ctx context.Context, _ *mcp.CallToolRequest, a pathsArgs) (*status, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	return s.act(ctx, a.target, "deleted", func(dp *client.DataPlane) error { return dp.DeleteFiles(ctx, a.Paths) })
}

func (s *Server) deleteDirectories(ctx context.Context, _ *mcp.CallToolRequest, d dirsArgs) (*status, error) {
	a := pathsArgs(d)
	if err := a.check(); err != nil {
		return nil, err
	}
	return s.act(ctx, a.target, "deleted", func(dp *client.DataPlane) error { return dp.DeleteDirectories(ctx, a.Paths) })
}

type searchArgs struct {
	target
	Path    string `json:"path" jsonschema:"Directory to search below."`
	Pattern string `json:"pattern" jsonschema:"Glob pattern for file names, e.g. \"*.py\"."`
}

// entryInfo is the official SDK's EntryInfo.
type entryInfo struct {
	Path       string      `json:"path"`
	Mode       int         `json:"mode"`
	Owner      string      `json:"owner"`
	Group      string      `json:"group"`
	Size       int64       `json:"size"`
	ModifiedAt client.Time `json:"modified_at"`
	CreatedAt  client.Time `json:"created_at"`
	Type       *string     `json:"type"`
}

type searchResult struct {
	Result    []entryInfo `json:"result"`
	Truncated *truncation `json:"truncated,omitempty"`
}

// entrySize is about what one entry costs in a result, for --max-output.
const entrySize = 256

func (s *Server) searchFiles(ctx context.Context, _ *mcp.CallToolRequest, a searchArgs) (*searchResult, error) {
	if a.Path == "" || a.Pattern == "" {
		return nil, usage("path and pattern must not be empty")
	}
	dp, err := s.execd(ctx, a.target)
	if err != nil {
		return nil, err
	}
	found, err := dp.SearchFiles(ctx, a.Path, a.Pattern)
	if err != nil {
		return nil, err
	}
	res := &searchResult{Result: []entryInfo{}}
	b := s.serverBudget()
	limit := max(1, b.bytes/entrySize)
	for i, f := range found {
		if i == limit {
			res.Truncated = &truncation{Limit: b.bytes, Note: fmt.Sprintf(
				"only %d of %d matches were returned, to keep within %s; narrow the path or the pattern", limit, len(found), b)}
			break
		}
		typ := f.Type
		res.Result = append(res.Result, entryInfo{Path: f.Path, Mode: f.Mode, Owner: f.Owner, Group: f.Group, Size: f.Size,
			ModifiedAt: f.ModifiedAt, CreatedAt: f.CreatedAt, Type: &typ})
	}
	return res, nil
}

type mkdirArgs struct {
	target
	Entries []mkdirEntry `json:"entries" jsonschema:"Directories to create."`
}

type mkdirEntry struct {
	Path string `json:"path" jsonschema:"Directory to create."`
	Mode int    `json:"mode,omitempty" default:"755" jsonschema:"Permissions as octal digits written as a number."`
	owners
}

// UnmarshalJSON fills in the default mode, which the SDK gives only to
// the arguments themselves, not to the entries of a list.
func (e *mkdirEntry) UnmarshalJSON(b []byte) error {
	type plain mkdirEntry
	p := plain{Mode: 755}
	err := json.Unmarshal(b, &p)
	*e = mkdirEntry(p)
	return err
}

func (s *Server) createDirectories(ctx context.Context, _ *mcp.CallToolRequest, a mkdirArgs) (*status, error) {
	if len(a.Entries) == 0 {
		return nil, usage("entries must name at least one directory")
	}
	dirs := map[string]client.Permission{}
	for _, e := range a.Entries {
		if e.Path == "" {
			return nil, usage("every entry needs a path")
		}
		if err := checkMode(e.Mode); err != nil {
			return nil, err
		}
		dirs[e.Path] = client.Permission{Mode: e.Mode, Owner: e.Owner, Group: e.Group}
	}
	return s.act(ctx, a.target, "created", func(dp *client.DataPlane) error { return dp.CreateDirectories(ctx, dirs) })
}

type moveArgs struct {
	target
	Entries []struct {
		Source      string `json:"source" jsonschema:"Path to move."`
		Destination string `json:"destination" jsonschema:"Where it goes; it must not exist yet."`
	} `json:"entries" jsonschema:"Moves to make, in order."`
}

func (s *Server) moveFiles(ctx context.Context, _ *mcp.CallToolRequest, a moveArgs) (*status, error) {
	if len(a.Entries) == 0 {
		return nil, usage("entries must name at least one move")
	}
	moves := make([]client.Move, len(a.Entries))
	for i, e := range a.Entries {
		if e.Source == "" || e.Destination == "" {
			return nil, usage("every move needs a source and a destination")
		}
		moves[i] = client.Move{Src: e.Source, Dest: e.Destination}
	}
	return s.act(ctx, a.target, "moved", func(dp *client.DataPlane) error { return dp.MoveFiles(ctx, moves) })
}

type replaceArgs struct {
	target
	Entries []struct {
		Path       string `json:"path" jsonschema:"File to change."`
		OldContent string `json:"old_content" jsonschema:"Exact text to find; every occurrence is replaced."`
		NewContent string `json:"new_content" jsonschema:"Text to put in its place."`
	} `json:"entries" jsonschema:"Replacements, one per file."`
}

type replaceCount struct {
	Path          string `json:"path"`
	ReplacedCount int    `json:"replaced_count"`
}

type replaceResult struct {
	Result []replaceCount `json:"result"`
}

func (s *Server) replaceContents(ctx context.Context, _ *mcp.CallToolRequest, a replaceArgs) (*replaceResult, error) {
	if len(a.Entries) == 0 {
		return nil, usage("entries must name at least one file")
	}
	edits := map[string]client.Replacement{}
	var order []string
	for _, e := range a.Entries {
		if e.Path == "" || e.OldContent == "" {
			return nil, usage("every entry needs a path and a non-empty old_content")
		}
		if _, dup := edits[e.Path]; dup {
			return nil, usage("%s appears in two entries: give one replacement per file", e.Path)
		}
		edits[e.Path] = client.Replacement{Old: e.OldContent, New: e.NewContent}
		order = append(order, e.Path)
	}
	dp, err := s.execd(ctx, a.target)
	if err != nil {
		return nil, err
	}
	counts, err := dp.ReplaceContentCounted(ctx, edits)
	if err != nil {
		return nil, err
	}
	res := &replaceResult{Result: []replaceCount{}}
	for _, p := range order {
		res.Result = append(res.Result, replaceCount{Path: p, ReplacedCount: counts[p]})
	}
	return res, nil
}
