package client

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Event types of execd's execution streams (POST /command, session runs).
const (
	EventInit     = "init"               // Text is the execution id (a session run: the session id)
	EventPing     = "ping"               // keep-alive, every few seconds, even after the end
	EventStdout   = "stdout"             // Data is a chunk of output
	EventStderr   = "stderr"             // Data is a chunk of output
	EventError    = "error"              // Error says why; terminal
	EventComplete = "execution_complete" // success; terminal
	// EventServerError stands for a bare {"code","message"} object that a
	// server writes into a stream it already started (execd does so when a
	// session run times out). It has no "type" on the wire; it is terminal.
	EventServerError = "server_error"
)

// ExecError is the error of an error event. For a command that ran, Name is
// CommandExecError and Value its exit code; "-1" means killed by a signal;
// any other text means the command could not start.
type ExecError struct {
	Name      string   `json:"ename"`
	Value     string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

// Event is one frame of an execution stream. Types this client does not know
// are kept with their Type and Raw and can be ignored.
type Event struct {
	Type          string
	Text          string     // init: execution id; ping: "pong"
	Data          []byte     // stdout/stderr: the exact bytes of the chunk
	Timestamp     int64      // unix ms; 0 when absent
	ExecutionTime *int64     // execution_complete: milliseconds, when sent
	Error         *ExecError // error (never nil); server_error: Name is the code, Value the message
	Raw           []byte     // the JSON object as received
}

// Terminal reports whether the event ends an execution: nothing after it
// matters (a server may still send pings, or hold the stream open).
func (e *Event) Terminal() bool {
	switch e.Type {
	case EventError, EventComplete, EventServerError:
		return true
	}
	return false
}

// ExitCode is the remote exit code an event carries: 0 for
// execution_complete, the integer evalue of an error event (-1: killed by a
// signal). ok is false when the event says nothing about it (a start
// failure, a server error, a non-terminal event).
func (e *Event) ExitCode() (code int, ok bool) {
	switch e.Type {
	case EventComplete:
		return 0, true
	case EventError:
		if e.Error == nil {
			return 0, false
		}
		n, err := strconv.Atoi(e.Error.Value)
		return n, err == nil
	}
	return 0, false
}

// EventReader reads execution events from a stream in either framing seen in
// practice: execd's bare JSON objects each followed by a blank line, and
// standard server-sent events ("data: {...}" lines ended by a blank line).
// Frames may be any size and may arrive split across reads. Comments,
// malformed frames and non-JSON data are skipped.
type EventReader struct {
	br   *bufio.Reader
	data []byte // data: lines of the event being assembled, joined by \n
	has  bool   // at least one data: line seen
	name string // event: field of the event being assembled
	done bool
}

// NewEventReader reads events from r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{br: bufio.NewReaderSize(r, 32<<10)}
}

// Next returns the next event, or io.EOF once the stream has ended. Any other
// error is the underlying reader's.
func (r *EventReader) Next() (*Event, error) {
	for !r.done {
		line, err := r.readLine()
		if err != nil {
			r.done = true
			if err != io.EOF {
				return nil, err
			}
			// An event not closed by a blank line still counts at the end.
			if ev := r.dispatch(); ev != nil {
				return ev, nil
			}
			break
		}
		if ev := r.feed(line); ev != nil {
			return ev, nil
		}
	}
	return nil, io.EOF
}

// readLine returns the next line without its terminator (\n, \r\n), however
// long. The last line of a stream needs no terminator.
func (r *EventReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	switch {
	case err == io.EOF && len(line) > 0:
		err = nil
	case err != nil:
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'}), nil
}

// feed takes one line and returns an event when the line completes one.
func (r *EventReader) feed(line []byte) *Event {
	if len(line) == 0 {
		return r.dispatch()
	}
	if trimmed := bytes.TrimLeft(line, " \t"); len(trimmed) > 0 && trimmed[0] == '{' {
		// A bare frame is one line of compact JSON; it needs no blank line
		// after it (a server error object at the very end has none).
		return decodeEvent(trimmed, "")
	}
	switch line[0] {
	case ':':
		return nil // comment
	}
	field, value, _ := bytes.Cut(line, []byte{':'})
	value = bytes.TrimPrefix(value, []byte{' '})
	switch string(field) {
	case "data":
		if r.has {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.has = true
	case "event":
		r.name = string(value)
	}
	return nil
}

// dispatch ends the SSE event being assembled.
func (r *EventReader) dispatch() *Event {
	data, name, has := r.data, r.name, r.has
	r.data, r.name, r.has = r.data[:0], "", false
	if !has {
		return nil
	}
	return decodeEvent(bytes.TrimSpace(data), name)
}

// decodeEvent reads one JSON object leniently: unknown fields are ignored,
// and a known field of an unexpected type is treated as absent. It returns
// nil for anything that is not a JSON object.
func decodeEvent(obj []byte, sseName string) *Event {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		return nil
	}
	ev := &Event{Raw: append([]byte(nil), obj...)}
	ev.Type, _ = rawString(m["type"])
	if ev.Type == "" {
		ev.Type = sseName
	}
	ev.Text, _ = rawString(m["text"])
	ev.Timestamp, _ = rawInt(m["timestamp"])
	if n, ok := rawInt(m["execution_time"]); ok {
		ev.ExecutionTime = &n
	}
	ev.Error = rawExecError(m["error"])
	if ev.Error == nil {
		// Older servers put the error fields at the top level.
		ev.Error = flatExecError(m)
	}
	switch {
	case ev.Type == EventStdout || ev.Type == EventStderr:
		ev.Data = outputBytes(ev.Text, m)
	case ev.Type == EventError && ev.Error == nil:
		ev.Error = &ExecError{} // an error all the same, with nothing said
	case ev.Type == "" && (m["code"] != nil || m["message"] != nil):
		code, _ := rawString(m["code"])
		msg, _ := rawString(m["message"])
		ev.Type, ev.Error = EventServerError, &ExecError{Name: code, Value: msg}
	}
	return ev
}

// TextBase64Field is our server's addition to output frames: when a chunk is
// not valid UTF-8, "text" carries it with replacement characters (what any
// client can show) and this field carries the exact bytes.
const TextBase64Field = "text_base64"

func outputBytes(text string, m map[string]json.RawMessage) []byte {
	if s, ok := rawString(m[TextBase64Field]); ok && s != "" {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return b
		}
	}
	return []byte(text)
}

func rawString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return "", false
}

func rawInt(raw json.RawMessage) (int64, bool) {
	s, ok := rawString(raw)
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	return int64(f), err == nil
}

func rawExecError(raw json.RawMessage) *ExecError {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil
	}
	return flatExecError(m)
}

func flatExecError(m map[string]json.RawMessage) *ExecError {
	name, hasName := rawString(m["ename"])
	value, hasValue := rawString(m["evalue"])
	if !hasName && !hasValue {
		return nil
	}
	e := &ExecError{Name: name, Value: value}
	var lines []json.RawMessage
	if json.Unmarshal(m["traceback"], &lines) == nil {
		for _, l := range lines {
			if s, ok := rawString(l); ok {
				e.Traceback = append(e.Traceback, s)
			}
		}
	}
	return e
}

// StreamError means an execution stream broke after it had started.
type StreamError struct {
	URL string
	Err error
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("the stream from %s broke: %s", e.URL, describeNetErr(e.Err))
}
func (e *StreamError) Unwrap() error { return e.Err }
