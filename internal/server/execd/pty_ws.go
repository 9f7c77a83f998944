//go:build linux

package execd

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The WebSocket of a PTY session, GET /pty/{id}/ws. Frames, as on execd:
//   - server to client: binary frames whose first byte is the channel
//     (0x01 stdout, 0x02 stderr in pipe mode, 0x03 replay: an 8-byte
//     big-endian offset, then bytes), and JSON text frames (connected, exit,
//     error, pong), each ending with a newline;
//   - client to server: binary 0x00 + stdin bytes, and JSON text frames
//     stdin, resize, signal, ping (and stdin_eof, ours).
//
// One client at a time: another gets 409 ALREADY_CONNECTED, unless it asks
// for ?takeover=1, which closes the current client's socket with 4001
// TAKEN_OVER and hands the session over.

// Timings of the socket; variables so that tests can shorten them.
var (
	ptyPingEvery    = 30 * time.Second // a WebSocket ping this often; no pong within as long ends the socket
	ptyTakeoverWait = 5 * time.Second  // how long a takeover waits for the current client to let go
	ptyWriteTimeout = 10 * time.Second // a client that takes in nothing for this long is cut off
	ptyLingerMax    = time.Minute      // how long a closed socket waits for its client to read what is on its way and go (pty_sock.go)
)

const (
	closeTakenOver websocket.StatusCode = 4001
	ptyReadLimit                        = 16 << 20 // largest client frame
)

// Error codes of the socket's error frames and refusals.
const (
	codeAlreadyConnected = "ALREADY_CONNECTED"
	codeStartFailed      = "START_FAILED"
	codeStdinFailed      = "STDIN_WRITE_FAILED"
	codeInvalidFrame     = "INVALID_FRAME"
)

// ptyHolder is the client connected to a session.
type ptyHolder struct {
	mu      sync.Mutex
	conn    *websocket.Conn // nil until the handshake is done
	leave   func()          // lets go of the session; set once serving
	evicted bool
	closing sync.Once
}

// evict closes the holder's socket with 4001 TAKEN_OVER and lets go of
// the session at once, without waiting for the client to acknowledge the
// close: a takeover is for a client that may have stopped reading.
func (hd *ptyHolder) evict() {
	hd.mu.Lock()
	hd.evicted = true
	conn, leave := hd.conn, hd.leave
	hd.mu.Unlock()
	if conn != nil {
		hd.closeTakenOver(conn)
	}
	if leave != nil {
		leave()
	}
}

func (hd *ptyHolder) closeTakenOver(conn *websocket.Conn) {
	hd.closing.Do(func() { go conn.Close(closeTakenOver, "TAKEN_OVER") })
}

// serving records the holder's socket and how it lets go of the session;
// false means it was evicted already.
func (hd *ptyHolder) serving(conn *websocket.Conn, leave func()) bool {
	hd.mu.Lock()
	hd.conn, hd.leave = conn, leave
	evicted := hd.evicted
	hd.mu.Unlock()
	if evicted {
		hd.closeTakenOver(conn)
	}
	return !evicted
}

func (hd *ptyHolder) isEvicted() bool {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	return hd.evicted
}

// claim makes hd the session's holder if it has none.
func (s *ptySession) claim(hd *ptyHolder) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holder != nil {
		return false
	}
	s.holder = hd
	return true
}

// takeOver evicts holders until hd holds the session, or gives up.
func (s *ptySession) takeOver(hd *ptyHolder) bool {
	deadline := time.Now().Add(ptyTakeoverWait)
	for !s.claim(hd) {
		if time.Now().After(deadline) {
			return false
		}
		s.mu.Lock()
		cur := s.holder
		s.mu.Unlock()
		if cur != nil {
			cur.evict()
		}
		// A holder still in its handshake lets go when that is done.
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// release lets go of the session if hd still holds it.
func (s *ptySession) release(hd *ptyHolder) {
	s.mu.Lock()
	if s.holder == hd {
		s.holder = nil
	}
	s.mu.Unlock()
}

func (h *ptyHost) serveWS(w http.ResponseWriter, r *http.Request) {
	s := h.session(w, r)
	if s == nil {
		return
	}
	q := r.URL.Query()
	upgrade := isUpgrade(r)
	takeover := q.Get("takeover") == "1" && upgrade
	hd := &ptyHolder{}
	claimed := s.claim(hd)
	if !claimed && !takeover {
		writeError(w, http.StatusConflict, codeAlreadyConnected, "another client is already connected to pty session "+s.id)
		return
	}
	if !upgrade {
		// What execd's WebSocket library answers to a plain request.
		s.release(hd)
		http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
		return
	}
	// A takeover evicts the holder only once this handshake succeeded.
	lw := &lingerWriter{ResponseWriter: w}
	conn, err := websocket.Accept(lw, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		if claimed {
			s.release(hd)
		}
		return
	}
	conn.SetReadLimit(ptyReadLimit)
	c := &ptyConn{s: s, hd: hd, conn: conn, raw: lw.conn}
	if !claimed && !s.takeOver(hd) {
		c.sendJSON(ptyServerFrame{Type: "error", Code: codeAlreadyConnected, Error: "takeover timed out for pty session " + s.id})
		conn.CloseNow()
		return
	}
	defer s.release(hd)
	c.serve(q.Get("pty") == "0", parseOffset(q.Get("since")))
}

func isUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// parseOffset reads ?since=, 0 when absent or not a number (as execd).
func parseOffset(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// ptyConn is one client's socket on a session it holds.
type ptyConn struct {
	s    *ptySession
	hd   *ptyHolder
	conn *websocket.Conn
	// ended is set, under endMu, as the exit frame goes: nothing the
	// client's input causes (a failed stdin write) may come after it.
	endMu sync.Mutex
	ended bool
	raw   *lingerConn // what conn runs on
}

type ptyServerFrame struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id,omitempty"`
	Mode      string `json:"mode,omitempty"`
	StdinEOF  bool   `json:"stdin_eof,omitempty"` // connected: this server takes stdin_eof
	ExitCode  *int   `json:"exit_code,omitempty"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
}

type ptyClientFrame struct {
	Type   string `json:"type"`
	Data   string `json:"data"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
	Signal string `json:"signal"`
}

// serve starts bash if none runs, sends the replay and the connected frame,
// then relays until bash exits or the client leaves.
func (c *ptyConn) serve(pipe bool, since int64) {
	if err := c.s.start(pipe); err != nil {
		c.sendJSON(ptyServerFrame{Type: "error", Code: codeStartFailed, Error: err.Error()})
		c.conn.CloseNow()
		return
	}
	sink := newPTYSink()
	replay, offset := c.s.attach(sink, since)
	leave := func() { c.s.detach(sink); c.s.release(c.hd) }
	defer leave()
	if !c.hd.serving(c.conn, leave) {
		return
	}
	if len(replay) > 0 {
		frame := make([]byte, 9, 9+len(replay))
		frame[0] = chanReplay
		binary.BigEndian.PutUint64(frame[1:9], uint64(offset))
		if c.write(websocket.MessageBinary, append(frame, replay...)) != nil {
			c.conn.CloseNow()
			return
		}
	}
	mode := c.s.current().mode()
	if c.sendJSON(ptyServerFrame{Type: "connected", SessionID: c.s.id, Mode: mode, StdinEOF: true}) != nil {
		c.conn.CloseNow()
		return
	}
	done := make(chan struct{})
	defer close(done)
	go c.relayOutput(sink, leave, done)
	go c.keepAlive(done)
	c.readClient()
}

// relayOutput sends live output, then the exit frame once bash is gone.
func (c *ptyConn) relayOutput(sink *ptySink, leave func(), done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case chunk, ok := <-sink.out:
			if !ok {
				code := c.s.status().ExitCode
				c.endMu.Lock()
				c.ended = true
				c.sendJSON(ptyServerFrame{Type: "exit", ExitCode: code})
				c.endMu.Unlock()
				leave() // a client may connect again as soon as it has read this
				c.conn.Close(websocket.StatusNormalClosure, "process exited")
				return
			}
			frame := append([]byte{chunk.channel}, chunk.data...)
			if c.write(websocket.MessageBinary, frame) != nil {
				c.conn.CloseNow()
				return
			}
		}
	}
}

// keepAlive pings the client; one that does not answer is cut off.
func (c *ptyConn) keepAlive(done <-chan struct{}) {
	t := time.NewTicker(ptyPingEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), ptyPingEvery)
			before := c.raw.intake()
			err := c.conn.Ping(ctx)
			cancel()
			// The pong comes behind the output sent before it: a client
			// still taking that in is there.
			if err != nil && !c.raw.intake().since(before) {
				c.conn.CloseNow()
				return
			}
		}
	}
}

// readClient handles the client's frames until the socket closes. A failed
// stdin write (the command no longer reads its input) is reported once;
// later input is dropped, and output and the exit frame still come, so
// that the client learns how the command ended.
func (c *ptyConn) readClient() {
	stdinFailed := false
	for {
		typ, data, err := c.conn.Read(context.Background())
		if err != nil {
			return
		}
		if stdinFailed && (typ == websocket.MessageBinary || isStdinFrame(data)) {
			continue
		}
		if typ == websocket.MessageBinary {
			err = c.binaryFrame(data)
		} else {
			err = c.textFrame(data)
		}
		if err != nil {
			stdinFailed = true
			c.endMu.Lock()
			if !c.ended {
				c.sendJSON(ptyServerFrame{Type: "error", Code: codeStdinFailed, Error: err.Error()})
			}
			c.endMu.Unlock()
		}
	}
}

// isStdinFrame reports a JSON frame that carries or ends input.
func isStdinFrame(data []byte) bool {
	var f ptyClientFrame
	return json.Unmarshal(data, &f) == nil && (f.Type == "stdin" || f.Type == "stdin_eof")
}

// binaryFrame takes stdin (0x00 + bytes); other channels are ignored.
func (c *ptyConn) binaryFrame(data []byte) error {
	if len(data) <= 1 || data[0] != chanStdin || c.hd.isEvicted() {
		return nil
	}
	return c.s.writeStdin(data[1:])
}

// textFrame takes a JSON frame; one that is not JSON is ignored, as on execd.
// Only a failed stdin write is returned: it ends the socket.
func (c *ptyConn) textFrame(data []byte) error {
	var f ptyClientFrame
	if json.Unmarshal(data, &f) != nil {
		return nil
	}
	if c.hd.isEvicted() {
		return nil // the session is someone else's now
	}
	switch f.Type {
	case "stdin":
		if f.Data != "" {
			return c.s.writeStdin([]byte(f.Data))
		}
	case "stdin_eof":
		if err := c.s.closeStdin(); err != nil {
			c.sendJSON(ptyServerFrame{Type: "error", Code: codeInvalidFrame, Error: err.Error()})
		}
	case "resize":
		if f.Cols > 0 && f.Rows > 0 && f.Cols <= 0xffff && f.Rows <= 0xffff {
			c.s.resize(f.Cols, f.Rows)
		}
	case "signal":
		c.s.signal(f.Signal)
	case "ping":
		c.sendJSON(ptyServerFrame{Type: "pong"})
	default:
		c.sendJSON(ptyServerFrame{Type: "error", Code: codeInvalidFrame, Error: fmt.Sprintf("unknown frame type %q", f.Type)})
	}
	return nil
}

// sendJSON writes a text frame the way execd does: Go JSON, then a newline.
func (c *ptyConn) sendJSON(f ptyServerFrame) error {
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(f)
	return c.write(websocket.MessageText, b.Bytes())
}

// write sends one frame; a client that takes in nothing of what is queued
// for it for ptyWriteTimeout meanwhile loses its socket.
func (c *ptyConn) write(typ websocket.MessageType, p []byte) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer c.raw.watch(cancel)()
	return c.conn.Write(ctx, typ, p)
}
