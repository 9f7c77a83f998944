package mcp

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// truncation notes, in a result, that content was left out to keep the
// call within --max-output.
type truncation struct {
	OmittedBytes int64  `json:"omitted_bytes"`
	Note         string `json:"note"`
}

// maxLines bounds how many output lines a run keeps, whatever their size:
// a command printing a million empty lines must not hold a million.
const maxLines = 10000

// outputLine is one line of a command's output: one output event.
type outputLine struct {
	text      string
	stderr    bool
	timestamp int64
}

// lineOf is the line an output event carries. execd sends each line
// without its terminator, an empty line as "\n"; a server that keeps
// terminators sends them, and the one ending the line is dropped.
func lineOf(data []byte) string {
	s := strings.TrimSuffix(string(data), "\n")
	return strings.TrimSuffix(s, "\r")
}

// outputTail keeps the newest lines of a command's output within a byte
// budget shared by stdout and stderr, each line counted with the newline
// that joins it to the next: the end of a long output (the summary, the
// error) is what an agent needs.
type outputTail struct {
	max     int
	lines   []outputLine
	size    int
	dropped int64
}

func newOutputTail(max int) *outputTail { return &outputTail{max: max} }

func (t *outputTail) add(l outputLine) {
	t.lines = append(t.lines, l)
	t.size += len(l.text) + 1
	for len(t.lines) > maxLines {
		t.dropFirst()
	}
	for t.size > t.max {
		first := &t.lines[0]
		over := t.size - t.max
		if over >= len(first.text) {
			t.dropFirst()
			continue
		}
		cut := runeStart(first.text, over)
		first.text = first.text[cut:]
		t.size -= cut
		t.dropped += int64(cut)
	}
}

func (t *outputTail) dropFirst() {
	n := len(t.lines[0].text) + 1
	t.lines = t.lines[1:]
	t.size -= n
	t.dropped += int64(n)
}

// runeStart is the first index at or after i where a UTF-8 character starts.
func runeStart(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// logs is the kept output as the SDKs join output events: each event a
// line, lines joined by newlines, no newline after the last. Each stream
// is one message, stamped with the time of its first line; a stream that
// printed nothing has none. Never nil.
func (t *outputTail) logs() executionLogs {
	return executionLogs{Stdout: t.join(false), Stderr: t.join(true)}
}

func (t *outputTail) join(stderr bool) []outputMessage {
	var b strings.Builder
	var first *outputLine
	for i := range t.lines {
		l := &t.lines[i]
		if l.stderr != stderr {
			continue
		}
		if first == nil {
			first = l
		} else {
			b.WriteByte('\n')
		}
		b.WriteString(l.text)
	}
	if first == nil {
		return []outputMessage{}
	}
	return []outputMessage{{Text: b.String(), Timestamp: first.timestamp, IsError: stderr}}
}

func (t *outputTail) truncation() *truncation {
	if t.dropped == 0 {
		return nil
	}
	return &truncation{OmittedBytes: t.dropped, Note: fmt.Sprintf(
		"the output was longer than the %d-byte limit of this server (--max-output): the oldest %d bytes were left out",
		t.max, t.dropped)}
}

// cutText shortens s to at most max bytes without splitting a character.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// readTail reads r to its end and returns its last max bytes (fewer, so as
// not to start inside a UTF-8 character) and how many bytes came before
// them. It never holds more than about twice max bytes.
func readTail(r io.Reader, max int) (string, int64, error) {
	var buf []byte
	var dropped int64
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if over := len(buf) - max; over > max {
			buf = append(buf[:0], buf[over:]...)
			dropped += int64(over)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", 0, err
		}
	}
	if over := len(buf) - max; over > 0 {
		buf, dropped = buf[over:], dropped+int64(over)
	}
	text := string(buf)
	if dropped == 0 {
		return text, 0, nil
	}
	cut := runeStart(text, 0)
	return text[cut:], dropped + int64(cut), nil
}
