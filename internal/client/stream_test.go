package client

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
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

func readAll(t testing.TB, r io.Reader) []*Event {
	t.Helper()
	er := NewEventReader(r)
	var evs []*Event
	for {
		ev, err := er.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
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

func TestEventReaderLargeFrame(t *testing.T) {
	// Far beyond any line buffer: one 5 MiB chunk of output in one frame.
	text := strings.Repeat("0123456789abcdef", 5<<16)
	frame := fmt.Sprintf(`{"type":"stdout","text":%q}`+"\n\n", text)
	evs := readAll(t, strings.NewReader(frame+`{"type":"execution_complete"}`+"\n\n"))
	if len(evs) != 2 || string(evs[0].Data) != text || evs[1].Type != EventComplete {
		t.Fatalf("got %d events", len(evs))
	}
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
