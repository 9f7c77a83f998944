package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
)

// osb's own tools, served only when --tools names them.
func extraTools() []toolSpec {
	return []toolSpec{
		{name: "command_logs", extra: true, readOnly: true, add: handler((*Server).commandLogs),
			desc: "Read the output of a command started with command_run background true, and whether it " +
				"still runs. Pass the cursor of one answer to the next call to read only what is new."},
		{name: "file_upload", extra: true, destructive: true, add: handler((*Server).uploadFile),
			desc: "Write a file of any content, given as base64, in a sandbox (file_write is for text)."},
		{name: "file_download", extra: true, readOnly: true, add: handler((*Server).downloadFile),
			desc: "Read a file of any content from a sandbox, as base64 (file_read is for text). For a large " +
				"file, read it in parts with range_header."},
		shellTool(),
		codeRunTool(),
	}
}

type logsArgs struct {
	target
	ExecutionID string  `json:"execution_id" jsonschema:"The id command_run returned for the background command."`
	Cursor      *string `json:"cursor,omitempty" jsonschema:"The cursor of the previous answer: read on from there. None reads from the start."`
	perCallBudget
}

type commandLogs struct {
	ExecutionID string      `json:"execution_id"`
	Running     bool        `json:"running"`
	ExitCode    *int        `json:"exit_code"`
	Error       *string     `json:"error"`
	Output      string      `json:"output"`
	Cursor      *string     `json:"cursor"`
	Truncated   *truncation `json:"truncated,omitempty"`
}

// commandLogs reads the status first, then the output: a command that has
// ended by then has all its output in the answer. Output beyond the budget
// is left for the next call: the cursor returned points just after what
// was returned (execd's cursor is a byte offset).
func (s *Server) commandLogs(ctx context.Context, _ *mcp.CallToolRequest, a logsArgs) (*commandLogs, error) {
	if a.ExecutionID == "" {
		return nil, usage("execution_id must not be empty")
	}
	b, err := s.callBudget(a.MaxOutput)
	if err != nil {
		return nil, err
	}
	var cursor *int64
	if a.Cursor != nil && *a.Cursor != "" {
		n, err := strconv.ParseInt(*a.Cursor, 10, 64)
		if err != nil || n < 0 {
			return nil, usage("cursor must be the cursor of a previous answer, got %q", *a.Cursor)
		}
		cursor = &n
	}
	dp, err := s.execd(ctx, a.target)
	if err != nil {
		return nil, err
	}
	st, err := dp.CommandStatus(ctx, a.ExecutionID)
	if err != nil {
		return nil, err
	}
	logs, err := dp.CommandLogs(ctx, a.ExecutionID, cursor)
	if err != nil {
		return nil, err
	}
	defer logs.Body.Close()
	// JSON text is never shorter than the bytes it holds: b.bytes of them
	// are enough to fill the budget; one more tells whether there is more.
	data, err := io.ReadAll(io.LimitReader(logs.Body, int64(b.bytes)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the output of %s: %w", a.ExecutionID, err)
	}
	res := &commandLogs{ExecutionID: a.ExecutionID, Running: st.Running, ExitCode: st.ExitCode, Error: st.Error}
	text := string(data)
	kept := fitFront(text, b.bytes)
	if kept < len(text) {
		// A character cut at the end of what was read is left for the
		// next call.
		kept = len(trimPartialRune(data[:kept]))
		start := int64(0)
		if cursor != nil {
			start = *cursor
		}
		next := strconv.FormatInt(start+int64(kept), 10)
		res.Output, res.Cursor = text[:kept], &next
		res.Truncated = &truncation{Limit: b.bytes, Note: fmt.Sprintf(
			"the output from this cursor on is longer than %s: only its first %d bytes were returned; "+
				"read on with cursor %q", b, kept, next)}
		if logs.Cursor != nil {
			res.Truncated.OmittedBytes = *logs.Cursor - start - int64(kept)
		}
		return res, nil
	}
	res.Output = text
	if logs.Cursor != nil {
		c := strconv.FormatInt(*logs.Cursor, 10)
		res.Cursor = &c
	}
	return res, nil
}

type uploadArgs struct {
	target
	Path          string `json:"path" jsonschema:"File to write."`
	ContentBase64 string `json:"content_base64" jsonschema:"The whole content of the file, base64-encoded."`
	Mode          int    `json:"mode,omitempty" default:"644" jsonschema:"Permissions as octal digits written as a number, e.g. 755."`
	owners
}

type uploaded struct {
	Status string `json:"status"`
	Size   int    `json:"size"`
}

func (s *Server) uploadFile(ctx context.Context, _ *mcp.CallToolRequest, a uploadArgs) (*uploaded, error) {
	if base64.StdEncoding.DecodedLen(len(a.ContentBase64)) > s.opts.MaxUpload+2 {
		return nil, usage("the content is larger than the %d-byte limit of this server (--max-upload)", s.opts.MaxUpload)
	}
	data, err := base64.StdEncoding.DecodeString(a.ContentBase64)
	if err != nil {
		return nil, usage("content_base64 is not valid base64: %v", err)
	}
	if len(data) > s.opts.MaxUpload {
		return nil, usage("the content is larger than the %d-byte limit of this server (--max-upload)", s.opts.MaxUpload)
	}
	meta := client.FileMetadata{Path: a.Path, Mode: a.Mode, Owner: a.Owner, Group: a.Group}
	if err := s.upload(ctx, a.target, meta, data); err != nil {
		return nil, err
	}
	return &uploaded{Status: "written", Size: len(data)}, nil
}

type downloadArgs struct {
	target
	Path        string  `json:"path" jsonschema:"File to read."`
	RangeHeader *string `json:"range_header,omitempty" jsonschema:"Part of the file to read, as an HTTP Range value, e.g. \"bytes=0-1023\"."`
	perCallBudget
}

type fileBytes struct {
	Path          string      `json:"path"`
	ContentBase64 string      `json:"content_base64"`
	Size          int         `json:"size"`
	Truncated     *truncation `json:"truncated,omitempty"`
}

func (s *Server) downloadFile(ctx context.Context, _ *mcp.CallToolRequest, a downloadArgs) (*fileBytes, error) {
	b, err := s.callBudget(a.MaxOutput)
	if err != nil {
		return nil, err
	}
	part, err := s.download(ctx, a.target, a.Path, a.RangeHeader, b.bytes)
	if err != nil {
		return nil, err
	}
	// Base64 takes 4 bytes for every 3.
	trunc := part.keep(max(1, b.bytes/4)*3, b)
	return &fileBytes{Path: a.Path, ContentBase64: base64.StdEncoding.EncodeToString(part.data), Size: len(part.data), Truncated: trunc}, nil
}
