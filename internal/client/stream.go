package client

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Event types of execd's execution streams (POST /command, session runs).
const (
	EventInit     = "init"               // Text is the execution id (a session run: the session id)
	EventPing     = "ping"               // keep-alive, every few seconds, even after the end
	EventStdout   = "stdout"             // Data is one line of output
	EventStderr   = "stderr"             // Data is one line of output
	EventError    = "error"              // Error says why; terminal
	EventComplete = "execution_complete" // success; terminal
	// Code runs (POST /code) add these.
	EventResult = "result"          // Results is the MIME bundle of a value the code produced
	EventCount  = "execution_count" // ExecutionCount is the kernel's count of the run
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
// are kept with their Type and can be ignored.
type Event struct {
	Type string
	Text string // init: execution id; ping: "pong"; not set on output events
	// Data is the text of an output event: one line, without its
	// terminator, as execd sends it; "\n" stands for an empty line. A
	// server that keeps terminators sends them in Data.
	Data []byte
	// Partial says that Data is only a piece of a line too long to hold
	// at once; the pieces that follow, up to one with Partial false, are
	// the rest of it.
	Partial       bool
	Timestamp     int64      // unix ms; 0 when absent
	ExecutionTime *int64     // execution_complete: milliseconds, when sent
	Error         *ExecError // error (never nil); server_error: Name is the code, Value the message
	// ExecutionCount and Results come with code runs: Results is the JSON
	// object of a result event (MIME type → value; text/plain is "text").
	ExecutionCount int
	Results        []byte
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

// Output reports whether the event carries output.
func (e *Event) Output() bool { return e.Type == EventStdout || e.Type == EventStderr }

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

// Clone copies an event out of the reader's buffers.
func (e *Event) Clone() *Event {
	c := *e
	if e.Data != nil {
		c.Data = bytes.Clone(e.Data)
	}
	if e.ExecutionTime != nil {
		t := *e.ExecutionTime
		c.ExecutionTime = &t
	}
	return &c
}

// maxFrame caps a frame that has to be held whole to be decoded. Output
// frames in execd's layout are decoded piece by piece at any size; this
// bounds everything else (and SSE data: frames).
const maxFrame = 64 << 20

// EventReader reads execution events from a stream in either framing seen in
// practice: execd's bare JSON objects each followed by a blank line, and
// standard server-sent events ("data: {...}" lines ended by a blank line).
// It decodes each frame in one pass as it arrives, reusing its buffers:
// memory stays flat whatever the length of the stream, and an output line
// longer than the buffer is passed on in pieces. Comments, malformed frames
// and non-JSON data are skipped.
type EventReader struct {
	br   *bufio.Reader
	src  *waitHook
	ev   Event
	err  error
	done bool

	long []byte // a line longer than br's buffer, assembled
	text []byte // unescaped text of the current output event
	data []byte // data: lines of the SSE event being assembled, joined by \n
	has  bool   // at least one data: line seen
	name string // event: field of the SSE event being assembled
	// inText: reading the text of an output line piece by piece; the
	// type of that line.
	inText   bool
	textType string
	execTime int64
	// The last output frame's timestamp tail and its value: execd stamps
	// the lines of one read alike, so most tails are the one before.
	lastTail []byte
	lastTS   int64
}

// NewEventReader reads events from r.
func NewEventReader(r io.Reader) *EventReader {
	src := &waitHook{r: r}
	return &EventReader{br: bufio.NewReaderSize(src, 64<<10), src: src}
}

// BeforeRead sets a function called each time the reader is about to read
// from the stream, which may block: the moment to flush what was made of the
// events so far.
func (r *EventReader) BeforeRead(fn func()) { r.src.before = fn }

type waitHook struct {
	r      io.Reader
	before func()
}

func (w *waitHook) Read(p []byte) (int, error) {
	if w.before != nil {
		w.before()
	}
	return w.r.Read(p)
}

// Scan advances to the next event, which Event then returns. It returns
// false at the end of the stream or on an error, which Err then returns.
func (r *EventReader) Scan() bool {
	for !r.done {
		if r.inText {
			if r.scanText() {
				return true
			}
			continue
		}
		line, err := r.readLine()
		if err != nil {
			r.done = true
			if err != io.EOF {
				r.err = err
				return false
			}
			// An event not closed by a blank line still counts at the end.
			return r.dispatch()
		}
		if line == nil {
			continue // a long output line: its text follows piece by piece
		}
		if r.feed(line) {
			r.skipBlank()
			return true
		}
	}
	return false
}

// skipBlank consumes the blank line that follows an event, when it has
// already arrived, so that it costs no second readLine: execd ends every
// frame with one. It does what feed would do with it (dispatch with no data
// assembled only forgets the event name); with data assembled it is left.
func (r *EventReader) skipBlank() {
	if r.has {
		return
	}
	buf, _ := r.br.Peek(r.br.Buffered())
	switch {
	case len(buf) > 0 && buf[0] == '\n':
		r.br.Discard(1)
	case len(buf) > 1 && buf[0] == '\r' && buf[1] == '\n':
		r.br.Discard(2)
	default:
		return
	}
	r.name = ""
}

// Event is the event Scan found. It and its Data are valid until the next
// call to Scan.
func (r *EventReader) Event() *Event { return &r.ev }

// Err is the error that stopped Scan, or nil at the end of the stream.
func (r *EventReader) Err() error { return r.err }

// Next returns the next event, one the caller may keep, with a long line's
// pieces joined into one event (up to maxFrame), or io.EOF once the stream
// has ended. Any other error is the underlying reader's.
func (r *EventReader) Next() (*Event, error) {
	return nextWhole(r.Scan, r.Event, r.Err)
}

// nextWhole is Next over any Scan, Event and Err.
func nextWhole(scan func() bool, event func() *Event, errOf func() error) (*Event, error) {
	end := func() error {
		if err := errOf(); err != nil {
			return err
		}
		return io.EOF
	}
	if !scan() {
		return nil, end()
	}
	ev := event().Clone()
	for ev.Partial {
		if !scan() {
			if err := end(); err != io.EOF {
				return nil, err
			}
			return nil, io.ErrUnexpectedEOF // the stream ended inside a line
		}
		piece := event()
		if len(ev.Data)+len(piece.Data) > maxFrame {
			return nil, fmt.Errorf("an output line is larger than %d MiB", maxFrame>>20)
		}
		ev.Data = append(ev.Data, piece.Data...)
		ev.Partial = piece.Partial
		if piece.Timestamp != 0 {
			ev.Timestamp = piece.Timestamp // a long line's is on its last piece
		}
	}
	return ev, nil
}

// readLine returns the next line without its terminator (\n, \r\n). The
// last line of a stream needs no terminator. A line longer than the buffer
// is assembled, unless it starts an output frame in execd's layout: then it
// returns nil and the text is read piece by piece (scanText).
func (r *EventReader) readLine() ([]byte, error) {
	searched := 0
	for {
		buf, _ := r.br.Peek(r.br.Buffered())
		if i := bytes.IndexByte(buf[searched:], '\n'); i >= 0 {
			line := buf[:searched+i+1]
			r.br.Discard(len(line))
			return trimEOL(line), nil
		}
		searched = len(buf)
		if len(buf) == r.br.Size() {
			return r.longLine(buf)
		}
		if _, err := r.br.Peek(len(buf) + 1); err != nil {
			rest, _ := r.br.Peek(r.br.Buffered())
			if err == io.EOF && len(rest) > 0 {
				r.br.Discard(len(rest))
				return trimEOL(rest), nil
			}
			return nil, err
		}
	}
}

func trimEOL(line []byte) []byte {
	// Byte tests rather than bytes.TrimSuffix: this runs twice per event.
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}

// longLine handles a line that fills the whole buffer: the start of an
// output frame in execd's layout has its text read piece by piece; any
// other line is assembled, up to maxFrame.
func (r *EventReader) longLine(buf []byte) ([]byte, error) {
	if r.startText(buf) {
		return nil, nil
	}
	r.long = append(r.long[:0], buf...)
	r.br.Discard(len(buf))
	for {
		line, err := r.br.ReadSlice('\n')
		if len(r.long)+len(line) > maxFrame {
			return nil, fmt.Errorf("a stream frame is larger than %d MiB", maxFrame>>20)
		}
		r.long = append(r.long, line...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil && err != io.EOF:
			return nil, err
		}
		line = trimEOL(r.long)
		if cap(r.long) > 1<<20 {
			r.long = nil // do not keep a huge buffer for the rest of the stream
		}
		return line, nil
	}
}

// feed takes one line and reports whether it completed an event.
func (r *EventReader) feed(line []byte) bool {
	if len(line) == 0 {
		return r.dispatch()
	}
	if trimmed := trimSpace(line); len(trimmed) > 0 && trimmed[0] == '{' {
		// A bare frame is one line of compact JSON; it needs no blank line
		// after it (a server error object at the very end has none).
		return r.quickOutput(trimmed) || r.decode(trimmed, "")
	}
	if line[0] == ':' {
		return false // comment
	}
	field, value, _ := bytes.Cut(line, []byte{':'})
	value = bytes.TrimPrefix(value, []byte{' '})
	switch string(field) {
	case "data":
		if r.has {
			r.data = append(r.data, '\n')
		}
		if len(r.data)+len(value) > maxFrame {
			r.data, r.has = r.data[:0], false
			return false
		}
		r.data = append(r.data, value...)
		r.has = true
	case "event":
		r.name = string(value)
	}
	return false
}

// dispatch ends the SSE event being assembled.
func (r *EventReader) dispatch() bool {
	if !r.has {
		r.name = ""
		return false
	}
	data, name := r.data, r.name
	r.data, r.name, r.has = r.data[:0], "", false
	return r.decode(bytes.TrimSpace(data), name)
}

// decode reads one JSON object in one pass, leniently: unknown fields are
// ignored, and a known field of an unexpected type is treated as absent.
// It reports false for anything that is not a JSON object, or says nothing.
func (r *EventReader) decode(obj []byte, sseName string) bool {
	obj = trimSpace(obj)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return false
	}
	ev := &r.ev
	*ev = Event{}
	var text, b64, code, message, errObj gjson.Result
	flat := false
	gjson.Parse(unsafe.String(&obj[0], len(obj))).ForEach(func(key, value gjson.Result) bool {
		switch key.Str {
		case "type":
			ev.Type = knownType(value)
		case "text":
			text = value
		case TextBase64Field:
			b64 = value
		case "timestamp":
			ev.Timestamp = value.Int()
		case "execution_time":
			if value.Type == gjson.Number || value.Type == gjson.String && value.Str != "" {
				r.execTime = value.Int()
				ev.ExecutionTime = &r.execTime
			}
		case "error":
			errObj = value
		case "execution_count":
			ev.ExecutionCount = int(value.Int())
		case "results":
			if value.IsObject() {
				ev.Results = []byte(value.Raw) // a copy: obj is reused
			}
		case "ename", "evalue":
			flat = true
		case "code":
			code = value
		case "message":
			message = value
		}
		return true
	})
	if ev.Type == "" {
		ev.Type = sseName
	}
	switch {
	case ev.Output():
		ev.Data = r.outputBytes(text, b64)
	case ev.Type == EventError:
		ev.Error = execError(errObj)
		if ev.Error == nil && flat {
			// Older servers put the error fields at the top level.
			ev.Error = execError(gjson.ParseBytes(obj))
		}
		if ev.Error == nil {
			ev.Error = &ExecError{} // an error all the same, with nothing said
		}
	case ev.Type == "" && (code.Exists() || message.Exists()):
		ev.Type, ev.Error = EventServerError, &ExecError{Name: plainString(code), Value: plainString(message)}
	case ev.Type == "":
		return false
	default:
		ev.Text = plainString(text)
	}
	return true
}

// quickOutput decodes an output frame in execd's exact layout,
// {"type":"stdout","text":"…","timestamp":N}, without a general parser:
// nearly every frame of a stream is one. It reports false, having decoded
// nothing, for any other frame.
func (r *EventReader) quickOutput(frame []byte) bool {
	typ := ""
	switch {
	case bytes.HasPrefix(frame, stdoutPrefix):
		typ = EventStdout
	case bytes.HasPrefix(frame, stderrPrefix):
		typ = EventStderr
	default:
		return false
	}
	body := frame[len(stdoutPrefix):]
	q := bytes.IndexByte(body, '"')
	if q < 0 {
		return false
	}
	var data []byte
	if bytes.IndexByte(body[:q], '\\') < 0 {
		data = body[:q]
	} else {
		text, n, closed := unescape(r.text[:0], body)
		if !closed {
			return false
		}
		r.text, data, q = text, text, n-1
	}
	ts, ok := r.timestamp(body[q+1:])
	if !ok {
		return false
	}
	r.ev = Event{Type: typ, Data: data, Timestamp: ts}
	return true
}

// timestamp is timestampTail(tail), remembered for the next frame.
func (r *EventReader) timestamp(tail []byte) (int64, bool) {
	if len(r.lastTail) > 0 && bytes.Equal(tail, r.lastTail) {
		return r.lastTS, true
	}
	ts, ok := timestampTail(tail)
	if ok {
		r.lastTail, r.lastTS = append(r.lastTail[:0], tail...), ts
	}
	return ts, ok
}

// timestampTail reads the end of an execd output frame: `,"timestamp":N}`
// or just `}`.
func timestampTail(tail []byte) (int64, bool) {
	if len(tail) == 1 && tail[0] == '}' {
		return 0, true
	}
	digits, ok := bytes.CutPrefix(tail, []byte(`,"timestamp":`))
	if !ok || len(digits) < 2 || len(digits) > 20 || digits[len(digits)-1] != '}' {
		return 0, false
	}
	var n int64
	for _, c := range digits[:len(digits)-1] {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// knownType returns the event type without holding on to the frame's
// memory: the usual ones are constants.
func knownType(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	switch v.Str {
	case EventStdout:
		return EventStdout
	case EventStderr:
		return EventStderr
	case EventPing:
		return EventPing
	case EventInit:
		return EventInit
	case EventComplete:
		return EventComplete
	case EventError:
		return EventError
	}
	return strings.Clone(v.Str)
}

// plainString is a string or number field's text, copied out of the frame.
func plainString(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return strings.Clone(v.Str)
	case gjson.Number:
		return strings.Clone(v.Raw)
	}
	return ""
}

func execError(v gjson.Result) *ExecError {
	if !v.IsObject() {
		return nil
	}
	name, value := v.Get("ename"), v.Get("evalue")
	if !name.Exists() && !value.Exists() {
		return nil
	}
	e := &ExecError{Name: plainString(name), Value: plainString(value)}
	if tb := v.Get("traceback"); tb.IsArray() {
		for _, l := range tb.Array() {
			if l.Type == gjson.String || l.Type == gjson.Number {
				e.Traceback = append(e.Traceback, plainString(l))
			}
		}
	}
	return e
}

// TextBase64Field is our server's addition to output frames: when a chunk is
// not valid UTF-8, "text" carries it with replacement characters (what any
// client can show) and this field carries the exact bytes.
const TextBase64Field = "text_base64"

// outputBytes is the text of an output frame: the exact bytes when the
// frame carries them, else the unescaped text, without a copy when it has
// no escapes.
func (r *EventReader) outputBytes(text, b64 gjson.Result) []byte {
	if b64.Type == gjson.String && b64.Raw != `""` {
		raw := b64.Raw[1 : len(b64.Raw)-1]
		if n := base64.StdEncoding.DecodedLen(len(raw)); cap(r.text) < n {
			r.text = make([]byte, n)
		}
		if n, err := base64.StdEncoding.Decode(r.text[:cap(r.text)], []byte(raw)); err == nil {
			return r.text[:n]
		}
	}
	switch text.Type {
	case gjson.String:
		raw := unsafe.Slice(unsafe.StringData(text.Raw), len(text.Raw))
		body := raw[1 : len(raw)-1]
		if bytes.IndexByte(body, '\\') < 0 {
			return body
		}
		text, n, closed := unescape(r.text[:0], raw[1:])
		if !closed {
			// Only a malformed escape stops short of the quote: it is kept
			// as it is, as the shortcut (quickOutput) keeps it.
			text = append(text, raw[1+n:len(raw)-1]...)
		}
		r.text = text
		return r.text
	case gjson.Number:
		return []byte(text.Raw)
	}
	return nil
}

// Output frames in execd's layout start like this; a longer one has its
// text read piece by piece.
var (
	stdoutPrefix = []byte(`{"type":"stdout","text":"`)
	stderrPrefix = []byte(`{"type":"stderr","text":"`)
)

// startText begins reading a line too long for the buffer piece by piece,
// when it is an output frame in execd's layout. The prefix is consumed.
func (r *EventReader) startText(line []byte) bool {
	switch {
	case bytes.HasPrefix(line, stdoutPrefix):
		r.textType = EventStdout
	case bytes.HasPrefix(line, stderrPrefix):
		r.textType = EventStderr
	default:
		return false
	}
	r.inText = true
	r.br.Discard(len(stdoutPrefix))
	return true
}

// scanText decodes the buffered part of a long output line's text into one
// event. The last piece ends at the closing quote; what follows it on the
// line (a timestamp) is skipped.
func (r *EventReader) scanText() bool {
	for {
		buf, _ := r.br.Peek(r.br.Buffered())
		if len(buf) > 0 {
			text, n, closed := unescape(r.text[:0], buf)
			if n > 0 || closed {
				r.text = text
				r.br.Discard(n)
				r.ev = Event{Type: r.textType, Data: r.text, Partial: !closed}
				if closed {
					r.inText = false
					r.ev.Timestamp = r.lineTimestamp()
				}
				return true
			}
			// An escape cut off by what has arrived: wait for the rest.
		}
		if _, err := r.br.Peek(len(buf) + 1); err != nil {
			// The stream ended inside a frame: that piece is no event.
			r.inText, r.done = false, true
			if err != io.EOF {
				r.err = err
			}
			return false
		}
	}
}

// lineTimestamp reads the rest of a long output line, after its text: the
// frame's timestamp (0 when it has none), which the last piece carries.
func (r *EventReader) lineTimestamp() int64 {
	tail, err := r.br.ReadSlice('\n')
	for err == bufio.ErrBufferFull {
		_, err = r.br.ReadSlice('\n') // not a timestamp: skip the rest
		tail = nil
	}
	ts, _ := timestampTail(trimSpace(trimEOL(tail)))
	return ts
}

// unescape appends the JSON string text at the start of s (just after its
// opening quote) to dst, with escapes decoded as encoding/json decodes them.
// It stops at the closing quote (closed, consumed with it) or before an
// escape that s cuts off; n is how many bytes of s it used.
func unescape(dst, s []byte) (out []byte, n int, closed bool) {
	quote := -1 // the next '"' at or after n, found once per quote
	for n < len(s) {
		if quote < n {
			quote = len(s)
			if q := bytes.IndexByte(s[n:], '"'); q >= 0 {
				quote = n + q
			}
		}
		end := quote
		if b := bytes.IndexByte(s[n:end], '\\'); b >= 0 {
			end = n + b
		}
		dst = append(dst, s[n:end]...)
		n = end
		if n == len(s) {
			return dst, n, false
		}
		if s[n] == '"' {
			return dst, n + 1, true
		}
		var used int
		dst, used = appendEscape(dst, s[n:])
		if used == 0 {
			return dst, n, false
		}
		n += used
	}
	return dst, n, false
}

// appendEscape decodes the escape at the start of s (s[0] is '\'); used is
// 0 when s ends before the escape does.
func appendEscape(dst, s []byte) ([]byte, int) {
	if len(s) < 2 {
		return dst, 0
	}
	switch c := s[1]; c {
	case '"', '\\', '/':
		return append(dst, c), 2
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		if len(s) < 6 {
			return dst, 0
		}
		r1, ok := hex4(s[2:6])
		if !ok {
			return append(dst, s[:2]...), 2
		}
		if 0xD800 <= r1 && r1 < 0xDC00 {
			if len(s) < 12 {
				// The low half may follow; wait for it unless it cannot.
				if len(s) < 7 || s[6] == '\\' && (len(s) < 8 || s[7] == 'u') {
					return dst, 0
				}
			} else if s[6] == '\\' && s[7] == 'u' {
				if r2, ok := hex4(s[8:12]); ok && 0xDC00 <= r2 && r2 < 0xE000 {
					return utf8.AppendRune(dst, (r1-0xD800)<<10|(r2-0xDC00)+0x10000), 12
				}
			}
			return utf8.AppendRune(dst, utf8.RuneError), 6
		}
		if 0xDC00 <= r1 && r1 < 0xE000 {
			return utf8.AppendRune(dst, utf8.RuneError), 6
		}
		return utf8.AppendRune(dst, r1), 6
	}
	// Not an escape JSON knows: kept as it is.
	return append(dst, s[:2]...), 2
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// StreamError means an execution stream broke after it had started.
type StreamError struct {
	URL string
	Err error
	// Output says that output had arrived before the stream broke.
	Output bool
}

func (e *StreamError) Error() string {
	if e.Output {
		return fmt.Sprintf("the stream from %s broke off after output had arrived: %s", e.URL, streamBreak(e.Err))
	}
	return fmt.Sprintf("the stream from %s broke off: %s", e.URL, streamBreak(e.Err))
}
func (e *StreamError) Unwrap() error { return e.Err }

func streamBreak(err error) string {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return "the server closed the connection"
	}
	return describeNetErr(err)
}
