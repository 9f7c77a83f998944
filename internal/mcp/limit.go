package mcp

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// truncation notes, in a result, that content was left out to keep the
// call within --max-output.
type truncation struct {
	OmittedBytes int64  `json:"omitted_bytes"`
	Note         string `json:"note"`
}

// maxMessages bounds how many output messages a run keeps, whatever their
// size: a command writing one byte at a time must not hold a million.
const maxMessages = 10000

// outputTail keeps the newest output messages of a command within a byte
// budget shared by stdout and stderr: the end of a long output (the
// summary, the error) is what an agent needs.
type outputTail struct {
	max     int
	msgs    []outputMessage
	size    int
	dropped int64
}

func newOutputTail(max int) *outputTail { return &outputTail{max: max} }

func (t *outputTail) add(m outputMessage) {
	t.msgs = append(t.msgs, m)
	t.size += len(m.Text)
	for len(t.msgs) > maxMessages {
		t.dropFirst()
	}
	for t.size > t.max {
		first := &t.msgs[0]
		over := t.size - t.max
		if over >= len(first.Text) {
			t.dropFirst()
			continue
		}
		cut := runeStart(first.Text, over)
		first.Text = first.Text[cut:]
		t.size -= cut
		t.dropped += int64(cut)
	}
}

func (t *outputTail) dropFirst() {
	n := len(t.msgs[0].Text)
	t.msgs = t.msgs[1:]
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

// split returns the kept messages by stream, never nil.
func (t *outputTail) split() (stdout, stderr []outputMessage) {
	stdout, stderr = []outputMessage{}, []outputMessage{}
	for _, m := range t.msgs {
		if m.IsError {
			stderr = append(stderr, m)
		} else {
			stdout = append(stdout, m)
		}
	}
	return stdout, stderr
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
