package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// PTY sessions: execd's interactive shells, driven over a WebSocket
// (POST /pty, GET|DELETE /pty/{id}, GET /pty/{id}/ws; execd's PTY.md).

// PTYRequest creates a session. An empty Command means an interactive bash.
type PTYRequest struct {
	Cwd     string `json:"cwd,omitempty"`
	Command string `json:"command,omitempty"`
}

// PTYSession is GET /pty/{id}. ExitCode and the fields after it come from
// osb server only (GET /pty, and exit_code once bash exited).
type PTYSession struct {
	SessionID    string `json:"session_id"`
	Running      bool   `json:"running"`
	OutputOffset int64  `json:"output_offset"`
	ExitCode     *int   `json:"exit_code,omitempty"`
	Mode         string `json:"mode,omitempty"`
	Connected    bool   `json:"connected"`
	Cwd          string `json:"cwd,omitempty"`
	Command      string `json:"command,omitempty"`
	CreatedAt    string `json:"created_at,omitempty"`
}

// ErrPTYListUnsupported: the execd has no route that lists PTY sessions
// (the real one has none; osb server adds GET /pty).
var ErrPTYListUnsupported = errors.New("this execd cannot list PTY sessions: GET /pty is an osb server extension")

// PTYCreated is the answer to POST /pty. StdinEOF: the server takes the
// stdin_eof frame (osb server says so; a real execd has no such frame).
type PTYCreated struct {
	ID       string `json:"session_id"`
	StdinEOF bool   `json:"stdin_eof"`
}

// CreatePTY records a new session; its bash starts when the first
// WebSocket connects.
func (d *DataPlane) CreatePTY(ctx context.Context, req PTYRequest) (PTYCreated, error) {
	var out PTYCreated
	if _, err := d.Do(ctx, &Request{Method: http.MethodPost, Path: "/pty", JSON: req}, &out); err != nil {
		return out, err
	}
	if out.ID == "" {
		return out, errors.New("the server created a PTY session but gave no session_id")
	}
	return out, nil
}

// PTYSession fetches a session's state.
func (d *DataPlane) PTYSession(ctx context.Context, id string) (*PTYSession, error) {
	var s PTYSession
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/pty/" + url.PathEscape(id)}, &s)
	return &s, err
}

// DeletePTY ends a session and kills its shell.
func (d *DataPlane) DeletePTY(ctx context.Context, id string) error {
	_, err := d.Do(ctx, &Request{Method: http.MethodDelete, Path: "/pty/" + url.PathEscape(id)}, nil)
	return err
}

// ListPTY lists the sessions, or returns ErrPTYListUnsupported.
func (d *DataPlane) ListPTY(ctx context.Context) ([]PTYSession, error) {
	var out struct {
		Sessions []PTYSession `json:"sessions"`
	}
	_, err := d.Do(ctx, &Request{Method: http.MethodGet, Path: "/pty"}, &out)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound && apiErr.Code == "" {
		// execd's plain-text "404 page not found": no such route.
		return nil, ErrPTYListUnsupported
	}
	return out.Sessions, err
}

// PTYDial says how to connect.
type PTYDial struct {
	Pipe     bool  // no terminal: stdout and stderr apart (?pty=0); for a new shell only
	Since    int64 // replay output from this offset (0: all that is held)
	Takeover bool  // evict the connected client instead of getting 409
}

// ptyReadLimit bounds one frame from the server: a replay is at most the
// server's buffer (1 MiB on execd).
const ptyReadLimit = 16 << 20

// ptyStdinChunk is the largest stdin frame sent.
const ptyStdinChunk = 32 << 10

// DialPTY opens a session's WebSocket. The endpoint's headers go on the
// handshake as on every data-plane request. A refusal comes back as an
// *APIError (404 unknown session, 409 ALREADY_CONNECTED).
func (d *DataPlane) DialPTY(ctx context.Context, id string, o PTYDial) (*PTYConn, error) {
	q := url.Values{}
	if o.Pipe {
		q.Set("pty", "0")
	}
	if o.Since > 0 {
		q.Set("since", strconv.FormatInt(o.Since, 10))
	}
	if o.Takeover {
		q.Set("takeover", "1")
	}
	path := "/pty/" + url.PathEscape(id) + "/ws"
	u, display := d.t.addr.base+path, d.t.addr.display+path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	h := http.Header{}
	for k, v := range d.t.headers {
		h.Set(k, v)
	}
	if d.c.opts.UserAgent != "" {
		h.Set("User-Agent", d.c.opts.UserAgent)
	}
	dctx, cancel := context.WithTimeout(ctx, d.c.opts.RequestTimeout)
	defer cancel()
	start := time.Now()
	ws, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: d.c.wsClient(), HTTPHeader: h})
	if d.c.opts.Debug != nil {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		d.c.logExchange(req, resp, err, time.Since(start))
	}
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, decodeError(resp, http.MethodGet, display)
		}
		return nil, classify(dctx, "GET "+display, display, err)
	}
	ws.SetReadLimit(ptyReadLimit)
	return &PTYConn{ws: ws, url: display, free: make(chan []byte, 4)}, nil
}

// wsClient is the HTTP client for WebSocket handshakes: HTTP/1.1 only (an
// upgrade cannot happen over HTTP/2), and no redirects, so the endpoint's
// headers never go anywhere else.
func (c *Client) wsClient() *http.Client {
	c.wsOnce.Do(func() {
		hc := *c.http
		if t, ok := hc.Transport.(*http.Transport); ok {
			t = t.Clone()
			t.ForceAttemptHTTP2 = false
			t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			if t.TLSClientConfig != nil {
				t.TLSClientConfig.NextProtos = nil
			}
			hc.Transport = t
		}
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.ws = &hc
	})
	return c.ws
}

// PTYConn is an open session socket.
type PTYConn struct {
	ws   *websocket.Conn
	url  string
	last int         // the size of the last message read: the next is likely as large
	free chan []byte // buffers of frames released, for the next messages
}

// PTYFrameKind tells frames apart.
type PTYFrameKind int

const (
	PTYStdout    PTYFrameKind = iota // output (0x01); everything a terminal shows
	PTYStderr                        // stderr in pipe mode (0x02)
	PTYReplay                        // output missed, from Offset on (0x03)
	PTYConnected                     // {"type":"connected"}
	PTYExit                          // {"type":"exit"}: the shell ended with ExitCode
	PTYError                         // {"type":"error"}: Code, Message
	PTYPong                          // {"type":"pong"}
	PTYOther                         // a frame of a kind this client does not know
)

// PTYFrame is one frame from the server.
type PTYFrame struct {
	Kind      PTYFrameKind
	Data      []byte // output; until Release
	Offset    int64  // replay: the offset of Data[0]
	Mode      string // connected: pty or pipe
	StdinEOF  bool   // connected: the server takes stdin_eof (osb server)
	SessionID string
	ExitCode  *int
	Code      string
	Message   string
	buf       []byte // what Data is part of, read into by the connection
	conn      *PTYConn
}

// Release hands the frame's buffer back to its connection, for a later
// frame: the frame and its Data must not be used after. A stream of output
// then reads into a few buffers instead of one new one per message.
func (f *PTYFrame) Release() {
	if f == nil || f.conn == nil || f.buf == nil {
		return
	}
	f.conn.reuse(f.buf)
	f.buf, f.Data = nil, nil
}

// PTYClosedError: the server closed the socket with a close frame: 1000
// after the exit frame, 4001 when another client took the session over.
type PTYClosedError struct {
	Code   int
	Reason string
}

func (e *PTYClosedError) Error() string {
	if e.TakenOver() {
		return "another client took the session over"
	}
	return fmt.Sprintf("the server closed the session's socket (%d %s)", e.Code, e.Reason)
}

// TakenOver reports the 4001 TAKEN_OVER close.
func (e *PTYClosedError) TakenOver() bool { return e.Code == 4001 }

// Next reads the next frame. A close frame comes back as *PTYClosedError,
// a broken connection as *StreamError.
func (p *PTYConn) Next(ctx context.Context) (*PTYFrame, error) {
	typ, data, err := p.read(ctx)
	if err != nil {
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return nil, &PTYClosedError{Code: int(ce.Code), Reason: ce.Reason}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &StreamError{URL: p.url, Err: err}
	}
	if typ == websocket.MessageText {
		f := decodePTYText(data)
		p.reuse(data)
		return f, nil
	}
	f := decodePTYBinary(data)
	f.buf, f.conn = data, p
	return f, nil
}

// reuse keeps buf for a later message.
func (p *PTYConn) reuse(buf []byte) {
	select {
	case p.free <- buf[:0]:
	default:
	}
}

// read reads one message whole, into a buffer as large as the last one
// was: read from nothing, a stream's 32 KiB message is copied through
// seven growing buffers on its way.
func (p *PTYConn) read(ctx context.Context) (websocket.MessageType, []byte, error) {
	typ, r, err := p.ws.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	// One byte more: a message as large as the last one ends without a
	// larger buffer made for the read that finds its end.
	size := max(p.last, 511) + 1
	var buf []byte
	select {
	case buf = <-p.free:
	default:
	}
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			p.last = len(buf)
			return typ, buf, nil
		}
		if err != nil {
			return 0, nil, err
		}
	}
}

func decodePTYBinary(data []byte) *PTYFrame {
	if len(data) == 0 {
		return &PTYFrame{Kind: PTYOther}
	}
	switch data[0] {
	case 0x01:
		return &PTYFrame{Kind: PTYStdout, Data: data[1:]}
	case 0x02:
		return &PTYFrame{Kind: PTYStderr, Data: data[1:]}
	case 0x03:
		if len(data) < 9 {
			return &PTYFrame{Kind: PTYOther}
		}
		return &PTYFrame{Kind: PTYReplay, Offset: int64(binary.BigEndian.Uint64(data[1:9])), Data: data[9:]}
	}
	return &PTYFrame{Kind: PTYOther}
}

func decodePTYText(data []byte) *PTYFrame {
	var f struct {
		Type      string `json:"type"`
		SessionID string `json:"session_id"`
		Mode      string `json:"mode"`
		StdinEOF  bool   `json:"stdin_eof"`
		ExitCode  *int   `json:"exit_code"`
		Error     string `json:"error"`
		Code      string `json:"code"`
	}
	if json.Unmarshal(data, &f) != nil {
		return &PTYFrame{Kind: PTYOther}
	}
	kinds := map[string]PTYFrameKind{"connected": PTYConnected, "exit": PTYExit, "error": PTYError, "pong": PTYPong}
	kind, ok := kinds[f.Type]
	if !ok {
		kind = PTYOther
	}
	return &PTYFrame{Kind: kind, SessionID: f.SessionID, Mode: f.Mode, StdinEOF: f.StdinEOF, ExitCode: f.ExitCode, Code: f.Code, Message: f.Error}
}

// WriteStdin sends input, in frames of at most 32 KiB.
func (p *PTYConn) WriteStdin(ctx context.Context, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), ptyStdinChunk)
		frame := make([]byte, 1+n)
		copy(frame[1:], b[:n]) // frame[0] is 0x00, stdin
		if err := p.ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
			return p.writeErr(err)
		}
		b = b[n:]
	}
	return nil
}

// Resize sets the remote terminal's size.
func (p *PTYConn) Resize(ctx context.Context, cols, rows int) error {
	return p.control(ctx, map[string]any{"type": "resize", "cols": cols, "rows": rows})
}

// Signal sends SIGINT, SIGTERM, SIGKILL, SIGQUIT or SIGHUP to the shell.
func (p *PTYConn) Signal(ctx context.Context, name string) error {
	return p.control(ctx, map[string]any{"type": "signal", "signal": name})
}

// Ping asks for a pong frame. The server handles frames in order, so the
// pong also says that everything sent before it was taken in.
func (p *PTYConn) Ping(ctx context.Context) error {
	return p.control(ctx, map[string]any{"type": "ping"})
}

// CloseStdin ends the shell's input in pipe mode. It is an osb server
// extension, announced by PTYCreated.StdinEOF and PTYFrame.StdinEOF: send
// it to no other server (a real execd answers INVALID_FRAME).
func (p *PTYConn) CloseStdin(ctx context.Context) error {
	return p.control(ctx, map[string]any{"type": "stdin_eof"})
}

// Alive checks the connection with a WebSocket ping; it needs Next to be
// running in another goroutine, which takes in the answer.
func (p *PTYConn) Alive(ctx context.Context) error {
	if err := p.ws.Ping(ctx); err != nil {
		return p.writeErr(err)
	}
	return nil
}

// Close drops the connection at once; the session goes on without a client.
func (p *PTYConn) Close() error { return p.ws.CloseNow() }

func (p *PTYConn) control(ctx context.Context, v any) error {
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(v)
	if err := p.ws.Write(ctx, websocket.MessageText, bytes.TrimRight(b.Bytes(), "\n")); err != nil {
		return p.writeErr(err)
	}
	return nil
}

func (p *PTYConn) writeErr(err error) error {
	return &StreamError{URL: p.url, Err: err}
}
