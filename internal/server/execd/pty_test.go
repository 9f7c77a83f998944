//go:build linux

package execd

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// These tests speak the WebSocket protocol with a client of their own,
// frame by frame, not through osb's client.

// wsWait bounds each wait of a test for a frame: a guard against a hang,
// not a measure of speed.
const wsWait = time.Minute

type wsPeer struct {
	t    *testing.T
	conn *websocket.Conn
	// replayed is output that came in a replay frame before the connected
	// frame; outputUntil and untilEnd count it as the first output.
	replayed bytes.Buffer
}

func dialPTY(t *testing.T, url, id, query string) *wsPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wsWait)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, url+"/pty/"+id+"/ws"+query, nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s%s: HTTP %d: %v", id, query, status, err)
	}
	conn.SetReadLimit(4 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	return &wsPeer{t: t, conn: conn}
}

// next reads one frame.
func (p *wsPeer) next() (websocket.MessageType, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wsWait)
	defer cancel()
	return p.conn.Read(ctx)
}

func (p *wsPeer) mustNext() (websocket.MessageType, []byte) {
	p.t.Helper()
	typ, data, err := p.next()
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	return typ, data
}

func (p *wsPeer) text(s string) {
	p.t.Helper()
	if err := p.conn.Write(context.Background(), websocket.MessageText, []byte(s)); err != nil {
		p.t.Fatal(err)
	}
}

func (p *wsPeer) stdin(b []byte) {
	p.t.Helper()
	if err := p.conn.Write(context.Background(), websocket.MessageBinary, append([]byte{0}, b...)); err != nil {
		p.t.Fatal(err)
	}
}

// expectText reads the next frame, which must be exactly this text frame.
func (p *wsPeer) expectText(want string) {
	p.t.Helper()
	typ, data := p.mustNext()
	if typ != websocket.MessageText || string(data) != want {
		p.t.Fatalf("frame %v %q, want text %q", typ, data, want)
	}
}

// connected reads the connected frame of a session that bash started in
// on this connect. What bash printed before the server attached this
// client comes first, as a replay from offset from; that depends on how
// fast bash is, so it may or may not be there.
func (p *wsPeer) connected(id, mode string, from uint64) {
	p.t.Helper()
	typ, data := p.mustNext()
	if typ == websocket.MessageBinary && len(data) >= 9 && data[0] == chanReplay {
		if off := binary.BigEndian.Uint64(data[1:9]); off != from {
			p.t.Errorf("replay from %d, want %d", off, from)
		}
		p.replayed.Write(data[9:])
		typ, data = p.mustNext()
	}
	if typ != websocket.MessageText || string(data) != connectedFrame(id, mode) {
		p.t.Fatalf("frame %v %q, want the connected frame %q", typ, data, connectedFrame(id, mode))
	}
}

// outputUntil collects stdout frames until re matches them; text frames
// on the way are returned too.
func (p *wsPeer) outputUntil(re string) (out string, texts []string) {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	var b bytes.Buffer
	p.replayed.WriteTo(&b)
	for !rx.Match(b.Bytes()) {
		typ, data := p.mustNext()
		switch {
		case typ == websocket.MessageText:
			texts = append(texts, string(data))
		case len(data) > 0 && data[0] == chanStdout:
			b.Write(data[1:])
		default:
			p.t.Fatalf("unexpected frame %q", data)
		}
	}
	return b.String(), texts
}

// textFrame skips output until the next text frame, which must be want.
func (p *wsPeer) textFrame(want string) {
	p.t.Helper()
	for {
		typ, data := p.mustNext()
		if typ == websocket.MessageText {
			if string(data) != want {
				p.t.Fatalf("text frame %q, want %q", data, want)
			}
			return
		}
	}
}

// untilEnd collects everything to the close: stdout, stderr, text frames
// and the close status.
type ending struct {
	stdout, stderr bytes.Buffer
	texts          []string
	status         websocket.StatusCode
	reason         string
}

func (p *wsPeer) untilEnd() *ending {
	p.t.Helper()
	e := &ending{}
	p.replayed.WriteTo(&e.stdout)
	for {
		typ, data, err := p.next()
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) {
				p.t.Fatalf("socket ended without a close frame: %v", err)
			}
			e.status, e.reason = ce.Code, ce.Reason
			return e
		}
		switch {
		case typ == websocket.MessageText:
			e.texts = append(e.texts, string(data))
		case data[0] == chanStdout:
			e.stdout.Write(data[1:])
		case data[0] == chanStderr:
			e.stderr.Write(data[1:])
		default:
			p.t.Fatalf("unexpected binary frame %q", data)
		}
	}
}

func createPTY(t *testing.T, url string, body any) string {
	t.Helper()
	r := call(t, "POST", url+"/pty", body)
	var out struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(r.body), &out); r.status != 201 || err != nil || len(out.SessionID) != 36 {
		t.Fatalf("POST /pty: %d %s", r.status, r.body)
	}
	return out.SessionID
}

func connectedFrame(id, mode string) string {
	return `{"type":"connected","session_id":"` + id + `","mode":"` + mode + `","stdin_eof":true}` + "\n"
}

func TestPTYRoutes(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(New(newSandbox(t), Options{}))
	defer srv.Close()
	url := srv.URL

	// An empty body is allowed; a cwd is created when missing.
	id := createPTY(t, url, nil)
	if r := call(t, "GET", url+"/pty/"+id, nil); r.status != 200 || r.body != `{"session_id":"`+id+`","running":false,"output_offset":0}`+"\n" {
		t.Errorf("status: %d %q", r.status, r.body)
	}
	other := createPTY(t, url, map[string]string{"cwd": "/workspace/new/dir", "command": "pwd"})
	p := dialPTY(t, url, other, "?pty=0")
	p.connected(other, "pipe", 0) // pwd may be done before the client is attached
	// Unisolated, the sandbox's paths are seen from the host.
	if e := p.untilEnd(); !strings.HasSuffix(e.stdout.String(), "/workspace/new/dir\n") || e.texts[0] != `{"type":"exit","exit_code":0}`+"\n" {
		t.Errorf("pwd in the new cwd: %q %q", e.stdout.String(), e.texts)
	}

	if r := call(t, "POST", url+"/pty", "{"); r.status != 400 || !strings.Contains(r.body, `"code":"INVALID_REQUEST_BODY"`) {
		t.Errorf("bad body: %d %s", r.status, r.body)
	}
	for _, c := range [][2]string{{"GET", "/pty/nope"}, {"DELETE", "/pty/nope"}, {"GET", "/pty/nope/ws"}} {
		r := call(t, c[0], url+c[1], nil)
		if r.status != 404 || r.body != `{"code":"CONTEXT_NOT_FOUND","message":"pty session nope not found"}`+"\n" {
			t.Errorf("%s %s: %d %s", c[0], c[1], r.status, r.body)
		}
	}
	// Not a WebSocket handshake: 400, as execd's WebSocket library says.
	if r := call(t, "GET", url+"/pty/"+id+"/ws", nil); r.status != 400 {
		t.Errorf("plain GET of the socket: %d %s", r.status, r.body)
	}

	// Our extension: the list.
	r := call(t, "GET", url+"/pty", nil)
	var list struct {
		Sessions []map[string]any `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(r.body), &list); err != nil || r.status != 200 || len(list.Sessions) != 2 {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	first, second := list.Sessions[0], list.Sessions[1]
	if first["session_id"] != id || first["running"] != false || first["connected"] != false || first["mode"] != nil {
		t.Errorf("list entry of the new session: %v", first)
	}
	if second["session_id"] != other || second["mode"] != "pipe" || second["exit_code"] != 0.0 ||
		second["command"] != "pwd" || second["cwd"] != "/workspace/new/dir" || second["output_offset"] == 0.0 {
		t.Errorf("list entry of the ended session: %v", second)
	}

	if r := call(t, "DELETE", url+"/pty/"+id, nil); r.status != 200 || r.body != "" {
		t.Errorf("delete: %d %q", r.status, r.body)
	}
	if r := call(t, "GET", url+"/pty/"+id, nil); r.status != 404 {
		t.Errorf("after delete: %d %s", r.status, r.body)
	}
}

func TestPTYShell(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		id := createPTY(t, url, map[string]string{"cwd": "/tmp"})
		p := dialPTY(t, url, id, "")
		p.connected(id, "pty", 0) // bash may have printed its prompt already
		p.text(`{"type":"resize","cols":100,"rows":30}`)
		p.stdin([]byte("stty size; echo $((6*7)) $PWD; tty\n"))
		out, _ := p.outputUntil(`42 \S*/tmp\r\n/dev/pts/\d+\r\n`)
		if !strings.Contains(out, "30 100\r\n") {
			t.Errorf("stty size after resize: %q", out)
		}
		// JSON stdin works too (a debugging aid on execd).
		p.text(`{"type":"stdin","data":"echo json-$((1+1))\n"}`)
		p.outputUntil(`json-2\r\n`)
		p.text(`{"type":"ping"}`)
		p.textFrame(`{"type":"pong"}` + "\n")
		p.text(`{"type":"bogus"}`)
		p.textFrame(`{"type":"error","error":"unknown frame type \"bogus\"","code":"INVALID_FRAME"}` + "\n")
		p.stdin([]byte("exit 7\n"))
		e := p.untilEnd()
		if len(e.texts) != 1 || e.texts[0] != `{"type":"exit","exit_code":7}`+"\n" ||
			e.status != websocket.StatusNormalClosure || e.reason != "process exited" {
			t.Errorf("end: texts %q, close %d %q", e.texts, e.status, e.reason)
		}
		if r := call(t, "GET", url+"/pty/"+id, nil); !strings.Contains(r.body, `"running":false`) || !strings.Contains(r.body, `"exit_code":7`) {
			t.Errorf("status after exit: %s", r.body)
		}
	})
}

// allBytes is every byte value, repeated to n bytes.
func allBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7) // 7 is odd: every value comes round
	}
	return b
}

func TestPTYPipeMode(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		id := createPTY(t, url, map[string]string{"command": "cat; echo to-stderr >&2; exit 3"})
		p := dialPTY(t, url, id, "?pty=0")
		p.expectText(connectedFrame(id, "pipe"))
		in := allBytes(3<<20 + 123)
		go func() {
			for rest := in; len(rest) > 0; {
				n := min(len(rest), 40000)
				if p.conn.Write(context.Background(), websocket.MessageBinary, append([]byte{0}, rest[:n]...)) != nil {
					return
				}
				rest = rest[n:]
			}
			p.conn.Write(context.Background(), websocket.MessageText, []byte(`{"type":"stdin_eof"}`))
		}()
		e := p.untilEnd()
		if !bytes.Equal(e.stdout.Bytes(), in) {
			t.Errorf("stdout: %d bytes, not the %d sent", e.stdout.Len(), len(in))
		}
		if e.stderr.String() != "to-stderr\n" || len(e.texts) != 1 || e.texts[0] != `{"type":"exit","exit_code":3}`+"\n" {
			t.Errorf("stderr %q, texts %q", e.stderr.String(), e.texts)
		}
	})
}

func TestPTYReplay(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(New(newSandbox(t), Options{}))
	defer srv.Close()
	url := srv.URL
	// A shell that prints a line per line it reads, in pipe mode for exact bytes.
	id := createPTY(t, url, map[string]string{"command": `while read -r l; do
		if [ "$l" = big ]; then head -c 1200000 /dev/zero | tr '\0' x; echo; else echo "got $l"; fi
	done`})
	p := dialPTY(t, url, id, "?pty=0")
	p.expectText(connectedFrame(id, "pipe"))
	p.stdin([]byte("one\n"))
	p.outputUntil("^got one\n$")
	p.conn.Close(websocket.StatusNormalClosure, "")

	offset := func() int64 {
		var st struct {
			Running      bool  `json:"running"`
			OutputOffset int64 `json:"output_offset"`
		}
		r := call(t, "GET", url+"/pty/"+id, nil)
		json.Unmarshal([]byte(r.body), &st)
		if !st.Running {
			t.Fatalf("not running: %s", r.body)
		}
		return st.OutputOffset
	}
	if n := offset(); n != 8 {
		t.Fatalf("output_offset %d, want 8", n)
	}
	// Output while no one is connected is kept.
	reconnect := func(query string) *wsPeer {
		for deadline := time.Now().Add(wsWait); ; {
			c, resp, err := websocket.Dial(context.Background(), url+"/pty/"+id+"/ws"+query, nil)
			if err == nil {
				c.SetReadLimit(4 << 20)
				t.Cleanup(func() { c.CloseNow() })
				return &wsPeer{t: t, conn: c}
			}
			// The previous socket may not be released yet.
			if resp == nil || resp.StatusCode != 409 || time.Now().After(deadline) {
				t.Fatalf("reconnect: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	p = reconnect("?since=3")
	typ, data := p.mustNext()
	if typ != websocket.MessageBinary || string(data) != "\x03\x00\x00\x00\x00\x00\x00\x00\x03 one\n" {
		t.Fatalf("replay frame %q", data)
	}
	p.expectText(connectedFrame(id, "pipe"))
	p.stdin([]byte("two\n"))
	p.outputUntil("^got two\n$")
	p.conn.Close(websocket.StatusNormalClosure, "")

	// Caught up: no replay; the connected frame comes first.
	p = reconnect("?since=16")
	p.expectText(connectedFrame(id, "pipe"))
	// Bytes from before the ring's start are gone: the replay starts later
	// than asked, at the oldest byte held, and holds 1 MiB.
	p.stdin([]byte("big\n"))
	want := int64(16 + 1200000 + 1)
	for got := int64(0); got < want-16; {
		_, data := p.mustNext()
		got += int64(len(data) - 1)
	}
	p.conn.Close(websocket.StatusNormalClosure, "")
	p = reconnect("?since=0")
	_, data = p.mustNext()
	if off := int64(binary.BigEndian.Uint64(data[1:9])); data[0] != chanReplay || off != want-replayLimit || len(data)-9 != replayLimit {
		t.Fatalf("replay of a full ring: channel %d, offset %d, %d bytes", data[0], off, len(data)-9)
	}
	if !bytes.HasSuffix(data, []byte("xxx\n")) {
		t.Errorf("replay ends with %q", data[len(data)-10:])
	}
}

func TestPTYSingleHolderAndTakeover(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		id := createPTY(t, url, nil)
		first := dialPTY(t, url, id, "?pty=0")
		first.expectText(connectedFrame(id, "pipe"))
		first.stdin([]byte("X=kept; echo ready\n"))
		first.outputUntil("ready\n")

		r := call(t, "GET", url+"/pty/"+id+"/ws", nil, "Connection", "Upgrade", "Upgrade", "websocket",
			"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		if r.status != 409 || r.body != `{"code":"ALREADY_CONNECTED","message":"another client is already connected to pty session `+id+`"}`+"\n" {
			t.Errorf("second client: %d %s", r.status, r.body)
		}

		second := dialPTY(t, url, id, "?takeover=1&since=1000000")
		second.expectText(connectedFrame(id, "pipe")) // the mode is the running shell's
		_, _, err := first.next()
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4001 || ce.Reason != "TAKEN_OVER" {
			t.Errorf("first client's end: %v", err)
		}
		second.stdin([]byte("echo $X\n"))
		second.outputUntil("^kept\n$")
		second.stdin([]byte("exit\n"))
		if e := second.untilEnd(); e.texts[0] != `{"type":"exit","exit_code":0}`+"\n" {
			t.Errorf("end: %q", e.texts)
		}
	})
}

func TestPTYSignalAndDelete(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		id := createPTY(t, url, map[string]string{"command": "trap 'echo got-int; exit 9' INT; echo ready; while :; do sleep 0.05; done"})
		p := dialPTY(t, url, id, "?pty=0")
		p.connected(id, "pipe", 0)
		p.outputUntil("ready\n")
		p.text(`{"type":"signal","signal":"SIGINT"}`)
		if e := p.untilEnd(); !strings.HasSuffix(e.stdout.String(), "got-int\n") || e.texts[0] != `{"type":"exit","exit_code":9}`+"\n" {
			t.Errorf("after SIGINT: %q %q", e.stdout.String(), e.texts)
		}

		// A new socket on an ended session starts a new shell in it, as on
		// execd. Asked for what came after the first shell's output, the
		// client gets all of the new one's, replayed or live.
		ended := uint64(len("ready\ngot-int\n"))
		p = dialPTY(t, url, id, fmt.Sprintf("?pty=0&since=%d", ended))
		p.connected(id, "pipe", ended)
		if out, _ := p.outputUntil("ready\n"); out != "ready\n" {
			t.Errorf("the new shell's output: %q", out)
		}
		// DELETE ends the session: its client gets the exit frame (killed: -1).
		if r := call(t, "DELETE", url+"/pty/"+id, nil); r.status != 200 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		if e := p.untilEnd(); e.texts[0] != `{"type":"exit","exit_code":-1}`+"\n" || e.status != websocket.StatusNormalClosure {
			t.Errorf("after DELETE: %q %d", e.texts, e.status)
		}
	})
}

// A command that ends without reading its input: input that can no
// longer be written is reported once, and the exit frame still comes.
func TestPTYCommandEndsBeforeItsInput(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		id := createPTY(t, url, map[string]string{"command": "exit 3"})
		p := dialPTY(t, url, id, "?pty=0")
		p.expectText(connectedFrame(id, "pipe"))
		go func() {
			for range 100 {
				if p.conn.Write(context.Background(), websocket.MessageBinary, append([]byte{0}, allBytes(32000)...)) != nil {
					return
				}
			}
		}()
		e := p.untilEnd()
		last := len(e.texts) - 1
		if last < 0 || e.texts[last] != `{"type":"exit","exit_code":3}`+"\n" || last > 1 || e.status != websocket.StatusNormalClosure {
			t.Errorf("texts %q, close %d %q", e.texts, e.status, e.reason)
		}
		if last == 1 && !strings.Contains(e.texts[0], `"code":"STDIN_WRITE_FAILED"`) {
			t.Errorf("texts %q", e.texts)
		}
	})
}
