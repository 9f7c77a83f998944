package execd

import (
	"bytes"
	"unicode/utf8"

	"github.com/osb-dev/osb/internal/jsontext"
)

// Output of commands and session runs travels as lines, one stdout or
// stderr event per line with its terminator stripped, as on the real execd.
// Its two streams cut lines differently, and each is copied here:
//
//   - POST /command: a line ends at \n or at \r, and \r\n counts once (also
//     when the \r and the \n come in different reads). An empty line is an
//     event whose text is "\n" (no line can hold a "\n", so the text is
//     unambiguous). A progress bar redrawn with \r gives an event per redraw.
//   - A bash session run: a line ends at \n only, a \r just before it is
//     dropped, a \r elsewhere stays in the text, and empty lines are not
//     sent at all (the real execd reads the run's output with a line scanner
//     and skips empty text).
//
// In both, a last line without a terminator is sent when the output ends.

// maxLine is the longest line sent as one event. The real execd keeps a
// command's line in memory whatever its size, and fails a session run whose
// output has a line over 16 MiB. Here a longer line is sent as consecutive
// events of at most maxLine bytes each (never cutting a UTF-8 character),
// so that a stream holds at most about maxLine bytes of a line in memory.
// A variable so that tests can lower it.
var maxLine = 16 << 20

// lineRule says how output is cut into lines.
type lineRule int

const (
	commandLines lineRule = iota // \n, \r, \r\n; an empty line is sent as "\n"
	sessionLines                 // \n, with a \r before it dropped; empty lines skipped
)

// lineFramer cuts a byte stream into lines and hands each to emit. The
// slice emit gets is only valid during the call (it may be the caller's
// own buffer, or one lineFramer reuses): emit copies what it keeps. Feed it
// with write, then call flush once the stream has ended.
//
// emit's plain says that the line is all jsontext.Plain (with HTML
// escaping, as frames have it): nothing in it to escape. commandLines
// finds a line's end with that same scan, so a frame's encoding needs no
// second look at a line of plain text, the most common kind.
type lineFramer struct {
	rule lineRule
	emit func(line []byte, plain bool)
	line []byte // the line being assembled
	cr   bool   // commandLines: the last byte was a \r, so a \n now ends nothing
}

func (lf *lineFramer) write(p []byte) {
	if lf.rule == sessionLines {
		lf.writeSession(p)
		return
	}
	for len(p) > 0 {
		i, plain := plainLineEnd(p)
		if i < 0 {
			lf.add(p)
			lf.cr = false
			return
		}
		switch {
		case i > 0 && len(lf.line) == 0 && i <= maxLine:
			// A whole line within p, the common case: no copy.
			lf.emit(p[:i], plain)
			lf.cr = p[i] == '\r'
			p = p[i+1:]
			continue
		case i > 0:
			lf.add(p[:i])
			lf.cr = false
		}
		term := p[i]
		p = p[i+1:]
		switch {
		case len(lf.line) > 0:
			lf.end()
		case term == '\n' && lf.cr:
			// The \n of a \r\n: the line ended at the \r.
		default:
			lf.emit([]byte("\n"), false)
		}
		lf.cr = term == '\r'
	}
}

// plainLineEnd is lineEnd(p), and whether p[:i] is all jsontext.Plain.
func plainLineEnd(p []byte) (i int, plain bool) {
	n := jsontext.Plain(p, true)
	if n < len(p) && (p[n] == '\n' || p[n] == '\r') {
		return n, true
	}
	if i = lineEnd(p[n:]); i >= 0 {
		i += n
	}
	return i, false
}

// lineEnd is the index of the first \r or \n in p, or -1: bytes.IndexAny,
// but with the vectorised single-byte search, several times faster.
func lineEnd(p []byte) int {
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		return bytes.IndexByte(p, '\r')
	}
	if j := bytes.IndexByte(p[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

func (lf *lineFramer) writeSession(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			lf.add(p)
			return
		}
		lf.add(p[:i])
		p = p[i+1:]
		lf.line = bytes.TrimSuffix(lf.line, []byte{'\r'})
		lf.end()
	}
}

// flush sends the last line when the output ended without a terminator.
func (lf *lineFramer) flush() {
	if lf.rule == sessionLines {
		lf.line = bytes.TrimSuffix(lf.line, []byte{'\r'})
	}
	lf.end()
	lf.cr = false
}

// keptLine is how much of its buffer lineFramer keeps for the next line
// once a line is sent: more is what an unusually long line grew it to.
const keptLine = 64 << 10

// end sends the line assembled so far, if it is not empty.
func (lf *lineFramer) end() {
	if len(lf.line) > 0 {
		lf.emit(lf.line, false)
		lf.line = lf.line[:0]
		if cap(lf.line) > keptLine {
			lf.line = nil
		}
	}
}

// add appends to the current line, sending maxLine-sized pieces of it
// while it is longer than that. What stays is never empty, so that the
// terminator that ends the line cannot look like an empty line.
func (lf *lineFramer) add(b []byte) {
	lf.line = append(lf.line, b...)
	for len(lf.line) > maxLine {
		cut := completeUTF8(lf.line[:maxLine])
		if cut == 0 {
			cut = maxLine
		}
		lf.emit(lf.line[:cut], false)
		lf.line = lf.line[:copy(lf.line, lf.line[cut:])]
	}
}

// completeUTF8 returns how much of b can be sent without cutting a UTF-8
// character in two: all of it, unless it ends with the first bytes of one.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		c := b[i]
		if c < utf8.RuneSelf {
			return len(b)
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}
