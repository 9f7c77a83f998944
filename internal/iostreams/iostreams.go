// Package iostreams is the one authority on the process's standard streams:
// whether they are terminals, whether colour is allowed, and how wide the
// screen is. Commands get their streams from here so tests can swap in buffers.
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

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	noColor   bool
	width     int
}

// System returns streams bound to the real stdin, stdout and stderr.
func System() *IOStreams {
	s := &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		noColor:   os.Getenv("NO_COLOR") != "",
		width:     80,
	}
	if s.stdoutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			s.width = w
		}
	} else if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		s.width = c
	}
	return s
}

// Test returns streams backed by buffers; none of them is a terminal.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, width: 80}, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// IsStdinTTY reports whether stdin is a terminal.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetTTY overrides terminal detection; tests use it to check terminal rendering.
func (s *IOStreams) SetTTY(stdin, stdout, stderr bool) {
	s.stdinTTY, s.stdoutTTY, s.stderrTTY = stdin, stdout, stderr
}

// DisableColor turns colour off, as --no-color, NO_COLOR and [output] color=false do.
func (s *IOStreams) DisableColor() { s.noColor = true }

// ColorEnabled reports whether ANSI colour and icons may be written to stdout.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.noColor }

// ColorEnabledStderr reports whether ANSI colour may be written to stderr.
func (s *IOStreams) ColorEnabledStderr() bool { return s.stderrTTY && !s.noColor }

// ShowProgress reports whether a progress display on stderr would be seen by a person.
func (s *IOStreams) ShowProgress() bool { return s.stderrTTY }

// TerminalWidth is the width of stdout, 80 when unknown.
func (s *IOStreams) TerminalWidth() int { return s.width }
