// Package iostreams is the one authority on the process's standard streams:
// whether they are terminals and whether colour is allowed. Commands get
// their streams from here so tests can swap in buffers.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// IOStreams bundles the three standard streams with what is known about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inFile  *os.File // the real stdin and stdout (System), for terminal modes and sizes
	outFile *os.File

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	noColor   bool
	ansi      bool // the terminal understands ANSI escape sequences
	width     int  // columns of the terminal stdout is on; 0: unknown
	errWidth  int  // columns of the terminal stderr is on; 0: unknown
}

// System returns streams bound to the real stdin, stdout and stderr.
func System() *IOStreams {
	return Files(os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}

// Files returns streams bound to open files, such as a terminal's:
// System's, or a pseudo-terminal in tests.
func Files(in, out, errOut *os.File, getenv func(string) string) *IOStreams {
	return &IOStreams{
		In:        in,
		Out:       out,
		ErrOut:    errOut,
		inFile:    in,
		outFile:   out,
		stdinTTY:  isTerminal(in),
		stdoutTTY: isTerminal(out),
		stderrTTY: isTerminal(errOut),
		ansi:      getenv("TERM") != "dumb" && getenv("NO_COLOR") == "",
		width:     terminalWidth(out, getenv("COLUMNS")),
		errWidth:  terminalWidth(errOut, getenv("COLUMNS")),
	}
}

// terminalWidth is the width of the terminal f is on: $COLUMNS when it is
// a number, else what the terminal says.
func terminalWidth(f *os.File, columns string) int {
	if n, err := strconv.Atoi(columns); err == nil && n > 0 {
		return n
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return w
	}
	return 0
}

// TerminalWidth is the number of columns tables on stdout may take: the
// terminal's width, or 80 when it cannot be known.
func (s *IOStreams) TerminalWidth() int {
	if s.width > 0 {
		return s.width
	}
	return 80
}

// StderrWidth is the number of columns a progress display on stderr may
// take: the width of stderr's terminal, else TerminalWidth.
func (s *IOStreams) StderrWidth() int {
	if s.errWidth > 0 {
		return s.errWidth
	}
	return s.TerminalWidth()
}

// StdoutTTY reports whether stdout is a terminal, coloured or not: what
// decides whether output is fitted to its width.
func (s *IOStreams) StdoutTTY() bool { return s.stdoutTTY }

// SetWidth sets the terminal width; tests use it to check how tables fit.
func (s *IOStreams) SetWidth(columns int) { s.width = columns }

// Test returns streams backed by buffers; none of them is a terminal, and
// SetTTY alone gives a terminal without ANSI colour (SetANSI adds it), so
// that tests of borders and icons need not spell out escape sequences.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// IsStdinTTY reports whether stdin is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// SetTTY overrides terminal detection; tests use it to check terminal rendering.
func (s *IOStreams) SetTTY(stdin, stdout, stderr bool) {
	s.stdinTTY, s.stdoutTTY, s.stderrTTY = stdin, stdout, stderr
}

// DisableColor turns styled output off (colour, icons, borders), as
// --no-color and [output] color=false do.
func (s *IOStreams) DisableColor() { s.noColor = true }

// DisableANSI turns colour off but keeps the terminal layout (icons,
// borders), as NO_COLOR asks (no-color.org): set and not empty.
func (s *IOStreams) DisableANSI() { s.ansi = false }

// SetANSI says whether the terminal understands ANSI escape sequences
// (System decides from TERM); tests use it to check colour.
func (s *IOStreams) SetANSI(on bool) { s.ansi = on }

// ColorEnabled reports whether stdout is a terminal that may get icons and
// borders: styled output, which colour comes on top of.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.noColor }

// ColorEnabledStderr is ColorEnabled for stderr.
func (s *IOStreams) ColorEnabledStderr() bool { return s.stderrTTY && !s.noColor }

// ANSI reports whether ANSI colour may be written to stdout.
func (s *IOStreams) ANSI() bool { return s.ColorEnabled() && s.ansi }

// ANSIStderr reports whether ANSI colour may be written to stderr.
func (s *IOStreams) ANSIStderr() bool { return s.ColorEnabledStderr() && s.ansi }

// ShowProgress reports whether a progress display on stderr would be seen by a person.
func (s *IOStreams) ShowProgress() bool { return s.stderrTTY }
