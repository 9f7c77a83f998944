// Package iostreams is the one authority on the process's standard streams:
// whether they are terminals and whether colour is allowed. Commands get their streams from here so tests can swap in buffers.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"github.com/mattn/go-isatty"
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
}

// System returns streams bound to the real stdin, stdout and stderr.
func System() *IOStreams {
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
		noColor:   os.Getenv("NO_COLOR") != "",
	}
}

// Test returns streams backed by buffers; none of them is a terminal.
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

// DisableColor turns colour off, as --no-color, NO_COLOR and [output] color=false do.
func (s *IOStreams) DisableColor() { s.noColor = true }

// ColorEnabled reports whether ANSI colour and icons may be written to stdout.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.noColor }

// ColorEnabledStderr reports whether ANSI colour may be written to stderr.
func (s *IOStreams) ColorEnabledStderr() bool { return s.stderrTTY && !s.noColor }

// ShowProgress reports whether a progress display on stderr would be seen by a person.
func (s *IOStreams) ShowProgress() bool { return s.stderrTTY }
