package ops

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/osb-dev/osb/internal/client"
)

// Command is a command to run in a pipe-mode session of its own.
type Command struct {
	Script string    // shell text, run by bash; "": bash reads its script from Stdin
	Cwd    string    // where it runs (execd creates it when missing); "": execd's own
	Stdin  io.Reader // its input, to the end; nil: none (it reads an empty input)
	// Sized: the script reads a length of its input known to it, and so
	// needs no end of input (osb cp's `head -c N | tar x`).
	Sized bool
}

// StartCommand creates the session that runs c, ready to Run in pipe mode
// (the caller deletes it once done).
//
// osb server can end a command's input (it announces stdin_eof), and
// sends the exit frame after all the output: the script runs as it is and
// Stdin is streamed, then ended. A real execd can do neither: there the
// input is first copied to a file in the sandbox that the command reads
// (so that it sees the end of it), and the script is wrapped so that it
// writes markers once it has ended, and waits: the run ends when both
// markers have arrived, with the exit code they carry, and no output is
// cut off by an early exit frame.
func StartCommand(ctx context.Context, dp *client.DataPlane, c Command) (*Session, error) {
	created, err := dp.CreatePTY(ctx, client.PTYRequest{Cwd: c.Cwd, Command: c.Script})
	if err != nil {
		return nil, err
	}
	s := &Session{DP: dp, ID: created.ID, Stdin: c.Stdin}
	if created.StdinEOF {
		s.canEOF = true
		return s, nil
	}
	// Not started yet (bash starts on the first connection): nothing ran.
	if err := s.Delete(ctx); err != nil {
		return nil, err
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	input := ""
	switch {
	case c.Sized:
	case c.Stdin == nil:
		input = "/dev/null"
	default:
		r, size, err := sized(c.Stdin)
		if f, ok := r.(*os.File); ok && r != c.Stdin {
			defer f.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read stdin: %w", err)
		}
		input = "/dev/null" // for an empty input, nothing to copy
		if size > 0 {
			input = "/tmp/.osb-stdin-" + nonce
			if err := dp.Upload(ctx, client.FileMetadata{Path: input, Mode: 600}, io.LimitReader(r, size), size); err != nil {
				return nil, fmt.Errorf("cannot copy stdin to the sandbox: %w", err)
			}
		}
	}
	script := c.Script
	if script == "" {
		script = "bash --norc --noprofile" // as execd runs an empty command, reading its script from the input
	}
	created, err = dp.CreatePTY(ctx, client.PTYRequest{Cwd: c.Cwd, Command: endScript(script, input, nonce)})
	if err != nil {
		return nil, err
	}
	s = &Session{DP: dp, ID: created.ID, end: newEndMarkers(nonce)}
	if c.Sized {
		s.Stdin = c.Stdin
	}
	return s, nil
}

func newNonce() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// sized returns r with its length: a file's from where it is read, a
// pipe's once it has been read to its end into a local file (so that the
// upload that follows has a length and never waits on a slow writer).
func sized(r io.Reader) (io.Reader, int64, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if pos, err := f.Seek(0, io.SeekCurrent); err == nil {
				return f, fi.Size() - pos, nil
			}
		}
	}
	tmp, err := os.CreateTemp("", "osb-stdin-")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(tmp.Name()) // the open file stays readable, and goes with osb
	size, err := io.Copy(tmp, r)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	return tmp, size, err
}

// endScript wraps script for a real execd: its input comes from the file
// input (removed as soon as it is open; "": the session's own input), and
// once it has ended the exit code follows the marker on stderr, a marker
// ends stdout, and bash waits for osb to delete the session.
func endScript(script, input, nonce string) string {
	var b bytes.Buffer
	b.WriteString("(\n")
	if input != "" && input != "/dev/null" {
		b.WriteString("rm -f -- " + input + "\n")
	}
	b.WriteString(script + "\n)")
	if input != "" {
		b.WriteString(" <" + input)
	}
	tag := `\000osb-end-` + nonce + `\001`
	fmt.Fprintf(&b, "\nosb_rc=$?\nprintf '%s'\nprintf '%s%%d\\n' \"$osb_rc\" >&2\nread -r -t 3600 _\nexit \"$osb_rc\"", tag, tag)
	return b.String()
}

// endMarkers takes the markers out of a command's output, holding back
// any bytes that may be the start of one until the next bytes tell.
type endMarkers struct {
	tag          []byte
	out, err     []byte // held back
	outEnd, seen bool
	code         int
}

// newEndMarkers: the tag has no end that also begins it (a NUL only
// first, a 0x01 last), so output that ends like its start never makes the
// tag with the real marker after it.
func newEndMarkers(nonce string) *endMarkers {
	return &endMarkers{tag: []byte("\x00osb-end-" + nonce + "\x01")}
}

func (m *endMarkers) done() bool { return m.outEnd && m.seen }

// filter returns what of data is the command's own output.
func (m *endMarkers) filter(stderr bool, data []byte) []byte {
	held := &m.out
	if stderr {
		held = &m.err
	}
	if stderr && m.seen || !stderr && m.outEnd {
		return nil // after the marker: only the wrapper writes, and it writes nothing more
	}
	buf := append(*held, data...)
	*held = nil
	if i := bytes.Index(buf, m.tag); i >= 0 {
		if !stderr {
			m.outEnd = true
			return buf[:i]
		}
		rest := buf[i+len(m.tag):]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			*held = buf[i:] // the exit code is still to come
			return buf[:i]
		}
		code, err := strconv.Atoi(string(rest[:nl]))
		if err != nil {
			code = -1
		}
		m.seen, m.code = true, code
		return buf[:i]
	}
	keep := partialTag(buf, m.tag)
	*held = append([]byte(nil), buf[len(buf)-keep:]...)
	return buf[:len(buf)-keep]
}

// partialTag is the length of the longest end of buf that begins tag.
func partialTag(buf, tag []byte) int {
	for n := min(len(buf), len(tag)-1); n > 0; n-- {
		if bytes.HasPrefix(tag, buf[len(buf)-n:]) {
			return n
		}
	}
	return 0
}
