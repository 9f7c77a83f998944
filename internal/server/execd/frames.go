package execd

import (
	"encoding/base64"
	"strconv"

	"github.com/osb-dev/osb/internal/jsontext"
)

// Output lines are the bulk of a stream: hundreds of thousands of frames a
// second for a command printing short lines. They are encoded here by hand,
// byte for byte as encoding/json encodes a frame (frames_test.go checks it
// against encoding/json), without reflection and without copying the line.

// textPiece is how much of a line is encoded at a time, so that a long
// line never has more than this much of its encoding in memory at once.
const textPiece = 32 << 10

// appendOutputFrame appends the frame of one output line of kind (stdout
// or stderr), blank line included (plain: the line is known to be all
// jsontext.Plain, and is copied as it is), ending with stamp (frameEnd of its
// timestamp ts): what json.Marshal gives for frame{Type: kind, Text: line,
// TextBase64: ..., Timestamp: ts} and "\n\n".
// Whenever dst has grown to writeSize, spill takes it (and gives back what
// to append to), also within a line, which is encoded textPiece at a time:
// dst never holds more than writeSize and one piece's encoding, however
// long the line.
func appendOutputFrame(dst []byte, kind string, line []byte, plain bool, stamp []byte, spill func([]byte) []byte) []byte {
	if head := frameHead(kind); plain && head != "" && len(line) > 0 && len(line) <= textPiece {
		// The common line, short and with nothing to escape, in three
		// appends: most of a stream's frames, so each step counts.
		dst = append(append(append(append(dst, head...), line...), '"'), stamp...)
		if len(dst) >= writeSize {
			dst = spill(dst)
		}
		return dst
	}
	dst = append(append(append(dst, `{"type":"`...), kind...), '"')
	if len(line) == 0 { // omitempty, as in frame
		return append(dst, stamp...)
	}
	dst = append(dst, `,"text":"`...)
	valid := true
	for rest := line; len(rest) > 0; {
		n := len(rest)
		if n > textPiece {
			if n = completeUTF8(rest[:textPiece]); n == 0 {
				n = textPiece
			}
		}
		if plain {
			dst = append(dst, rest[:n]...)
		} else {
			var ok bool
			dst, ok = jsontext.Append(dst, rest[:n], true)
			valid = valid && ok
		}
		rest = rest[n:]
		if len(dst) >= writeSize {
			dst = spill(dst)
		}
	}
	dst = append(dst, '"')
	if !valid {
		dst = append(dst, `,"text_base64":"`...)
		const group = textPiece / 3 * 3 // whole 3-byte groups: no padding before the end
		for rest := line; len(rest) > 0; {
			n := min(len(rest), group)
			dst = base64.StdEncoding.AppendEncode(dst, rest[:n])
			rest = rest[n:]
			if len(dst) >= writeSize {
				dst = spill(dst)
			}
		}
		dst = append(dst, '"')
	}
	dst = append(dst, stamp...)
	if len(dst) >= writeSize {
		dst = spill(dst)
	}
	return dst
}

// frameHead is how an output frame of kind with text begins, up to the
// text's first byte; "" for a kind that is not output.
func frameHead(kind string) string {
	switch kind {
	case "stdout":
		return `{"type":"stdout","text":"`
	case "stderr":
		return `{"type":"stderr","text":"`
	}
	return ""
}

// frameEnd appends to dst how an output frame stamped ts ends: its
// timestamp, then the blank line. Lines read together share it.
func frameEnd(dst []byte, ts int64) []byte {
	dst = strconv.AppendInt(append(dst, `,"timestamp":`...), ts, 10)
	return append(dst, '}', '\n', '\n')
}
