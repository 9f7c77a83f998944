package iostreams

import (
	"errors"
	"os"

	"golang.org/x/term"
)

// ErrNotTerminal: stdin is not a terminal, so it cannot be made raw.
var ErrNotTerminal = errors.New("stdin is not a terminal")

// MakeRaw puts the stdin terminal in raw mode: every key, Ctrl-C and
// Ctrl-Z included, reaches the program as a byte, and nothing is echoed.
// The returned function restores the terminal; it may be called more than
// once.
func (s *IOStreams) MakeRaw() (restore func(), err error) {
	if !s.stdinTTY || s.inFile == nil {
		return nil, ErrNotTerminal
	}
	fd := int(s.inFile.Fd())
	state, err := term.MakeRaw(fd)
	if err != nil {
		return nil, err
	}
	done := false
	return func() {
		if !done {
			done = true
			term.Restore(fd, state)
		}
	}, nil
}

// TerminalSize is the size of the terminal osb runs in (stdout's, else
// stdin's); ok is false when neither is a terminal.
func (s *IOStreams) TerminalSize() (cols, rows int, ok bool) {
	for _, f := range []*os.File{s.outFile, s.inFile} {
		if f == nil {
			continue
		}
		if c, r, err := term.GetSize(int(f.Fd())); err == nil && c > 0 && r > 0 {
			return c, r, true
		}
	}
	return 0, 0, false
}
