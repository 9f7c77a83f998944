package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// summary renders events compactly: type, then text or data, then the
// error, one event per line, pings and unknown types included.
func summary(evs []*Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "%s", ev.Type)
		switch {
		case ev.Data != nil:
			fmt.Fprintf(&b, " %q", ev.Data)
		case ev.Text != "":
			fmt.Fprintf(&b, " text=%q", ev.Text)
		}
		if ev.ExecutionTime != nil {
			fmt.Fprintf(&b, " time=%d", *ev.ExecutionTime)
		}
		if ev.Error != nil {
			fmt.Fprintf(&b, " error=%s/%s/%q", ev.Error.Name, ev.Error.Value, ev.Error.Traceback)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// readAll reads every event (a long line's pieces joined) until the end or
// an error.
func readAll(t testing.TB, r io.Reader) []*Event {
	t.Helper()
	er := NewEventReader(r)
	var evs []*Event
	for {
		ev, err := er.Next()
		if err != nil {
			return evs
		}
		evs = append(evs, ev)
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readers feeds the same bytes whole, one byte per read, and in odd halves,
// so that frames split across reads are covered.
func readers(b []byte) map[string]io.Reader {
	return map[string]io.Reader{
		"whole":    bytes.NewReader(b),
		"bytewise": iotest.OneByteReader(bytes.NewReader(b)),
		"halves":   iotest.HalfReader(bytes.NewReader(b)),
	}
}

func TestEventReaderFixtures(t *testing.T) {
	const run = `init text="6247baac7e0e4db8ace115b4b610f78c"
ping text="pong"
stdout "a\r\n"
stdout "b"
stderr "err\n"
execution_complete time=1
`
	cases := map[string]string{
		// execd's own framing, with a ping after the terminal frame.
		"bare.stream": run + "ping text=\"pong\"\n",
		// Standard SSE: CRLF lines, comments, event:/id:/retry: fields, a
		// JSON object split over two data: lines, an unknown event type
		// and a non-JSON payload (skipped).
		"data.stream": strings.Replace(run, "stdout \"b\"", "status text=\"busy\"\nstdout \"b\"", 1),
		// A session timeout: the stream ends with a bare error object and
		// no blank line.
		"session-timeout.stream": `init text="3b0a7f2c-5d7e-4a51-9c39-8f8d1d6b2f10"
ping text="pong"
stdout "hi\n"
ping text="pong"
server_error error=RUNTIME_ERROR/error running in session. timeout after 500ms/[]
`,
		"exit3.stream": `init text="0f3c"
stdout "x"
error error=CommandExecError/3/["exit status 3"]
`,
	}
	for name, want := range cases {
		for how, r := range readers(fixture(t, name)) {
			if got := summary(readAll(t, r)); got != want {
				t.Errorf("%s read %s:\n%s\nwant:\n%s", name, how, got, want)
			}
		}
	}
}

// An output line far beyond the buffer comes in pieces no larger than the
// buffer, escapes decoded across their edges, the last piece marked; a
// frame of another layout is assembled whole.
func TestEventReaderLargeFrame(t *testing.T) {
	// 512 KiB once encoded, eight times the reader's buffer, escapes everywhere.
	line := strings.Repeat("0123456789abcdef\t\"é😀<", 1<<14)
	encoded, _ := json.Marshal(line)
	execd := `{"type":"stdout","text":` + string(encoded) + `,"timestamp":1795967002972}` + "\n\n"
	other := `{"text":` + string(encoded) + `,"type":"stderr"}` + "\n\n"
	end := `{"type":"execution_complete"}` + "\n\n"
	for how, r := range readers([]byte(execd + other + end)) {
		er := NewEventReader(r)
		var pieces int
		var got []byte
		for er.Scan() {
			ev := er.Event()
			if ev.Type != EventStdout {
				break
			}
			if len(ev.Data) > 64<<10 {
				t.Fatalf("%s: a piece of %d bytes", how, len(ev.Data))
			}
			got = append(got, ev.Data...)
			pieces++
			if !ev.Partial {
				// The frame's timestamp comes after the text: the last piece has it.
				if ev.Timestamp != 1795967002972 {
					t.Errorf("%s: the last piece has timestamp %d", how, ev.Timestamp)
				}
				break
			}
		}
		if string(got) != line || pieces < 2 {
			t.Fatalf("%s: %d pieces, %d bytes, want %d bytes", how, pieces, len(got), len(line))
		}
		if !er.Scan() || er.Event().Type != EventStderr || string(er.Event().Data) != line || er.Event().Partial {
			t.Fatalf("%s: the other layout: %+v", how, er.Event().Type)
		}
		if !er.Scan() || er.Event().Type != EventComplete || er.Scan() || er.Err() != nil {
			t.Fatalf("%s: the end: %v", how, er.Err())
		}
		// Next gives the same line whole.
		evs := readAll(t, bytes.NewReader([]byte(execd+end)))
		if len(evs) != 2 || string(evs[0].Data) != line || evs[0].Partial || evs[0].Timestamp != 1795967002972 {
			t.Fatalf("Next: %d events, the first stamped %d", len(evs), evs[0].Timestamp)
		}
	}
}

// A frame that has to be held whole and is larger than maxFrame ends the
// stream with an error rather than taking all memory.
func TestEventReaderFrameCap(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"text":"`), repeatReader('a', maxFrame+1), strings.NewReader(`"}`+"\n\n"))
	er := NewEventReader(r)
	if er.Scan() || er.Err() == nil || !strings.Contains(er.Err().Error(), "larger than 64 MiB") {
		t.Fatalf("err %v", er.Err())
	}
}

type repeated struct {
	c byte
	n int
}

func repeatReader(c byte, n int) io.Reader { return &repeated{c, n} }

func (r *repeated) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n)
	if n == 0 {
		return 0, nil
	}
	// Filled by doubling copies: a loop over every byte is slow under -race.
	p[0] = r.c
	for i := 1; i < n; i *= 2 {
		copy(p[i:n], p[:i])
	}
	r.n -= n
	return n, nil
}

func TestEventReaderExactBytes(t *testing.T) {
	raw := []byte("caf\xe9 \xff\x00\r\n")
	frame := fmt.Sprintf(`{"type":"stdout","text":"caf\ufffd \ufffd\u0000\r\n","%s":"%s"}`+"\n\n",
		TextBase64Field, base64.StdEncoding.EncodeToString(raw))
	evs := readAll(t, strings.NewReader(frame))
	if len(evs) != 1 || !bytes.Equal(evs[0].Data, raw) {
		t.Fatalf("data = %q", evs[0].Data)
	}
}

func TestEventReaderLenientFields(t *testing.T) {
	in := `{"type":"error","error":{"ename":"CommandExecError","evalue":127,"traceback":"not a list"},"timestamp":"soon"}` + "\n\n" +
		`{"type":"error","ename":"CommandExecError","evalue":"-1","traceback":["signal: killed"]}` + "\n\n" +
		`{"type":"execution_complete","execution_time":12.0}` + "\n\n" +
		`{"type":"error","error":"not an object"}` + "\n\n" +
		`[1,2,3]` + "\n\n" + `{"type":` + "\n\n"
	got := summary(readAll(t, strings.NewReader(in)))
	want := `error error=CommandExecError/127/[]
error error=CommandExecError/-1/["signal: killed"]
execution_complete time=12
error error=//[]
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestEventExitCode(t *testing.T) {
	cases := []struct {
		ev   Event
		code int
		ok   bool
	}{
		{Event{Type: EventComplete}, 0, true},
		{Event{Type: EventError, Error: &ExecError{Name: "CommandExecError", Value: "3"}}, 3, true},
		{Event{Type: EventError, Error: &ExecError{Name: "CommandExecError", Value: "-1"}}, -1, true},
		{Event{Type: EventError, Error: &ExecError{Name: "CommandExecError", Value: "fork/exec /bin/bash: operation not permitted"}}, 0, false},
		{Event{Type: EventServerError, Error: &ExecError{Name: "RUNTIME_ERROR", Value: "x"}}, 0, false},
		{Event{Type: EventStdout}, 0, false},
	}
	for _, c := range cases {
		code, ok := c.ev.ExitCode()
		if code != c.code || ok != c.ok {
			t.Errorf("%+v: ExitCode() = %d, %v", c.ev, code, ok)
		}
	}
}

type failingReader struct{ r io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset by peer")
	}
	return n, err
}

func TestEventReaderBrokenStream(t *testing.T) {
	// A partial frame then a broken connection: the error surfaces, and
	// the half frame is not passed off as an event.
	er := NewEventReader(failingReader{strings.NewReader(`{"type":"init","text":"x"}` + "\n\n" + `{"type":"stdo`)})
	if ev, err := er.Next(); err != nil || ev.Type != EventInit {
		t.Fatalf("first: %v %v", ev, err)
	}
	if ev, err := er.Next(); err == nil || err == io.EOF {
		t.Fatalf("second: %v %v, want the read error", ev, err)
	}
}

// FuzzEventReader checks that no input makes the reader panic or hang, and
// that how the bytes are split across reads never changes the events.
func FuzzEventReader(f *testing.F) {
	for _, name := range []string{"bare.stream", "data.stream", "session-timeout.stream", "exit3.stream"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("data: {}\n\n{\"type\":\"stdout\",\"text_base64\":\"//8=\"}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		whole := summary(readAll(t, bytes.NewReader(b)))
		if split := summary(readAll(t, iotest.OneByteReader(bytes.NewReader(b)))); split != whole {
			t.Fatalf("bytewise read differs:\n%s\nwhole:\n%s", split, whole)
		}
	})
}

// FuzzUnescape checks the string decoder against encoding/json on any
// valid JSON string, whole and cut at every point, as long lines are read.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a\"b\\c`, `\ud83d\ude00 \ud83d x \ude00`, `\u00e9\n\t\/\b\f\r`, `\uD83D\uDE00`, `plain`, `\ud800\ud800\udc00`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !utf8.ValidString(body) {
			return
		}
		var want string
		if json.Unmarshal([]byte(`"`+body+`"`), &want) != nil {
			return
		}
		s := []byte(body + `"trailing`)
		got, n, closed := unescape(nil, s)
		if string(got) != want || !closed || n != len(body)+1 {
			t.Fatalf("whole: %q n=%d closed=%v, want %q", got, n, closed, want)
		}
		for cut := 0; cut <= len(body); cut++ {
			first, used, done := unescape(nil, s[:cut])
			if done {
				t.Fatalf("cut %d: closed early", cut)
			}
			rest, n2, closed := unescape(nil, s[used:])
			if string(first)+string(rest) != want || !closed || used+n2 != len(body)+1 {
				t.Fatalf("cut %d: %q + %q, want %q", cut, first, rest, want)
			}
		}
	})
}

// FuzzQuickOutput checks that the shortcut for execd's usual output frame
// decodes any frame it accepts exactly as the general decoder does.
func FuzzQuickOutput(f *testing.F) {
	f.Add([]byte(`{"type":"stdout","text":"a\"b\u003c","timestamp":1795967002971}`))
	f.Add([]byte(`{"type":"stderr","text":"","timestamp":1}`))
	f.Add([]byte(`{"type":"stdout","text":"x"}`))
	f.Add([]byte(`{"type":"stdout","text":"x","timestamp":12,"text":"y"}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		var quick, general EventReader
		if !quick.quickOutput(frame) {
			return
		}
		checkQuickOutput(t, &quick, &general, frame)
		// Again after the frame before had another timestamp, and the same.
		quick.quickOutput([]byte(`{"type":"stdout","text":"x","timestamp":1795967002970}`))
		checkQuickOutput(t, &quick, &general, frame)
		quick.quickOutput(frame)
		checkQuickOutput(t, &quick, &general, frame)
	})
}

func checkQuickOutput(t *testing.T, quick, general *EventReader, frame []byte) {
	t.Helper()
	if !quick.quickOutput(frame) {
		t.Fatalf("the shortcut took %q once, not twice", frame)
	}
	if !general.decode(frame, "") {
		t.Fatalf("only the shortcut took %q", frame)
	}
	q, g := quick.Event(), general.Event()
	if q.Type != g.Type || !bytes.Equal(q.Data, g.Data) || q.Timestamp != g.Timestamp {
		t.Fatalf("%q: shortcut %s %q %d, decoder %s %q %d", frame, q.Type, q.Data, q.Timestamp, g.Type, g.Data, g.Timestamp)
	}
}

// A bare frame among SSE fields: the blank line after it still ends the
// SSE event being assembled, and forgets an event: name, however the
// bytes arrive.
func TestEventReaderBlankAfterBareFrame(t *testing.T) {
	stream := "event: status\n{\"type\":\"stdout\",\"text\":\"a\"}\n\ndata: {\"text\":\"t\"}\n\n" +
		"data: {\"type\":\"ping\",\"text\":\"pong\"}\n{\"type\":\"stderr\",\"text\":\"b\"}\r\n\r\n\n" +
		"{\"type\":\"execution_complete\"}\n\n"
	want := `stdout "a"
stderr "b"
ping text="pong"
execution_complete
`
	for how, r := range readers([]byte(stream)) {
		if got := summary(readAll(t, r)); got != want {
			t.Errorf("read %s:\n%s\nwant:\n%s", how, got, want)
		}
	}
}
