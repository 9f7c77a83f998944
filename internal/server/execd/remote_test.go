package execd

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// An agent's unchunked stream reaches the client whole and without its
// end mark however the reads fall; one that ends without the mark (the
// agent died) ends in io.ErrUnexpectedEOF after all it had sent, but for
// a part of the mark.
func TestEndCheckedStream(t *testing.T) {
	events := strings.Repeat(`{"type":"stdout","text":"line"}`+"\n\n", 40)
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
	}
	for name, wrap := range readers {
		for _, size := range []int{1, 3, 512} {
			for _, tc := range []struct {
				sent, want string
				err        error
			}{
				{events + StreamEnd, events, nil},
				{StreamEnd, "", nil},
				{events, events, io.ErrUnexpectedEOF},
				{events + StreamEnd[:5], events, io.ErrUnexpectedEOF},
				{events[:7] + StreamEnd[:3] + events[7:] + StreamEnd, events[:7] + StreamEnd[:3] + events[7:], nil},
				{"x", "x", io.ErrUnexpectedEOF},
				{"", "", io.ErrUnexpectedEOF},
			} {
				b := &endChecked{body: io.NopCloser(wrap(strings.NewReader(tc.sent)))}
				got, err := readAll(b, size)
				if err != tc.err {
					t.Errorf("%s, reads of %d, %q: error %v, want %v", name, size, shorten(tc.sent), err, tc.err)
				}
				if got != tc.want {
					t.Errorf("%s, reads of %d, %q: read %q, want %q", name, size, shorten(tc.sent), shorten(got), shorten(tc.want))
				}
			}
		}
	}
}

// readAll reads r to its end in reads of size bytes.
func readAll(r io.Reader, size int) (string, error) {
	var b strings.Builder
	p := make([]byte, size)
	for {
		n, err := r.Read(p)
		b.Write(p[:n])
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
	}
}

// An event is passed on as soon as it is read, not held until the next
// one: a command that prints a line and then waits shows the line.
func TestEndCheckedPassesEventsAtOnce(t *testing.T) {
	r, w := io.Pipe()
	b := &endChecked{body: r}
	event := `{"type":"stdout","text":"hi"}` + "\n\n"
	go w.Write([]byte(event)) // and nothing more until the read returns
	p := make([]byte, 512)
	n, err := b.Read(p)
	if string(p[:n]) != event || err != nil {
		t.Errorf("read %q, %v; want %q at once", p[:n], err, event)
	}
	w.CloseWithError(io.ErrUnexpectedEOF)
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:30] + "…" + s[len(s)-30:]
	}
	return s
}
