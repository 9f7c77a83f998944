package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// RunCommandRequest is execd's RunCommandRequest. Exactly one of Command
// (shell text) and Argv is set.
type RunCommandRequest struct {
	Command    string            `json:"command,omitempty"`
	Argv       []string          `json:"argv,omitempty"`
	Cwd        string            `json:"cwd,omitempty"`
	Background bool              `json:"background,omitempty"`
	Timeout    int64             `json:"timeout,omitempty"` // milliseconds; 0: none
	UID        *uint32           `json:"uid,omitempty"`
	GID        *uint32           `json:"gid,omitempty"`
	Envs       map[string]string `json:"envs,omitempty"`
}

// SessionRunRequest runs shell text in a bash session.
type SessionRunRequest struct {
	Command string `json:"command"`
	Cwd     string `json:"cwd,omitempty"`
	Timeout int64  `json:"timeout,omitempty"` // milliseconds; 0: none
}

// CommandStatus is execd's CommandStatusResponse.
type CommandStatus struct {
	ID         string  `json:"id"`
	Content    string  `json:"content"`
	Running    bool    `json:"running"`
	ExitCode   *int    `json:"exit_code"`
	Error      *string `json:"error"`
	StartedAt  *Time   `json:"started_at"`
	FinishedAt *Time   `json:"finished_at"`
}

// TailCursorHeader carries the next log cursor: a byte offset, whatever the
// spec says, so it is sent back verbatim and never computed.
const TailCursorHeader = "EXECD-COMMANDS-TAIL-CURSOR"

// EventStream is an open execution stream. Close it as soon as the terminal
// event arrived: execd holds /command streams open for a while after.
type EventStream struct {
	*EventReader
	body   io.Closer
	url    string
	output bool // an output event has arrived
}

// Scan advances to the next event (see EventReader.Scan).
func (s *EventStream) Scan() bool {
	if !s.EventReader.Scan() {
		return false
	}
	s.output = s.output || s.Event().Output()
	return true
}

// Err is nil at the end of the stream, or a *StreamError when the
// connection broke, a *TimeoutError when the server went silent.
func (s *EventStream) Err() error {
	err := s.EventReader.Err()
	var timeout *TimeoutError
	if err == nil || errors.Is(err, context.Canceled) || errors.As(err, &timeout) {
		return err
	}
	return &StreamError{URL: s.url, Err: err, Output: s.output}
}

// Next returns the next event, one the caller may keep (a long line whole,
// see EventReader.Next), io.EOF at the end, or the error Err describes.
func (s *EventStream) Next() (*Event, error) {
	return nextWhole(s.Scan, s.Event, s.Err)
}

// Close ends the stream without reading the rest.
func (s *EventStream) Close() error { return s.body.Close() }

func (d *DataPlane) openStream(ctx context.Context, path string, body any) (*EventStream, error) {
	resp, err := d.Stream(ctx, &Request{Method: http.MethodPost, Path: path, JSON: body})
	if err != nil {
		return nil, err
	}
	return &EventStream{EventReader: NewEventReader(resp.Body), body: resp.Body, url: d.t.addr.display + path}, nil
}

// RunCommand starts a command (POST /command) and returns its event stream.
// It is never retried: the command may have started.
func (d *DataPlane) RunCommand(ctx context.Context, req *RunCommandRequest) (*EventStream, error) {
	return d.openStream(ctx, "/command", req)
}

// CommandStatus fetches the status of a command, foreground or background.
func (d *DataPlane) CommandStatus(ctx context.Context, id string) (*CommandStatus, error) {
	var st CommandStatus
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/command/status/" + url.PathEscape(id)}, &st)
	return &st, err
}

// Logs is an open read of a background command's merged output: the bytes
// as the server sends them, and the cursor to read on from next time (nil
// when the server sent none). The caller reads Body and closes it.
type Logs struct {
	Body   io.ReadCloser
	Cursor *int64
}

// CommandLogs opens a background command's merged output from cursor (nil:
// from the start). The body is read as it comes, never held whole.
func (d *DataPlane) CommandLogs(ctx context.Context, id string, cursor *int64) (*Logs, error) {
	var q url.Values
	if cursor != nil {
		q = url.Values{"cursor": {strconv.FormatInt(*cursor, 10)}}
	}
	resp, err := d.Stream(ctx, &Request{Method: http.MethodGet, Path: "/command/" + url.PathEscape(id) + "/logs", Query: q})
	if err != nil {
		return nil, err
	}
	logs := &Logs{Body: resp.Body}
	if n, perr := strconv.ParseInt(resp.Header.Get(TailCursorHeader), 10, 64); perr == nil {
		logs.Cursor = &n
	}
	return logs, nil
}

// InterruptCommand stops a running command (or closes a bash session); execd
// answers once the process is gone.
func (d *DataPlane) InterruptCommand(ctx context.Context, id string) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodDelete, Path: "/command", Query: url.Values{"id": {id}}}, nil)
	return err
}

// CreateSession starts a bash session; cwd "" keeps the server's default.
func (d *DataPlane) CreateSession(ctx context.Context, cwd string) (string, error) {
	var body any
	if cwd != "" {
		body = map[string]string{"cwd": cwd}
	}
	var out struct {
		SessionID string `json:"session_id"`
	}
	_, err := d.Do(ctx, &Request{Method: http.MethodPost, Path: "/session", JSON: body}, &out)
	return out.SessionID, err
}

// RunInSession runs shell text in a session and returns its event stream.
func (d *DataPlane) RunInSession(ctx context.Context, sessionID string, req *SessionRunRequest) (*EventStream, error) {
	return d.openStream(ctx, "/session/"+url.PathEscape(sessionID)+"/run", req)
}

// DeleteSession ends a bash session.
func (d *DataPlane) DeleteSession(ctx context.Context, sessionID string) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodDelete, Path: "/session/" + url.PathEscape(sessionID)}, nil)
	return err
}
