package transfer

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/osb-dev/osb/internal/iostreams"
)

// screenLine is what a terminal shows on its last line after s was written
// to it: carriage returns move back to the start, characters overwrite,
// ESC[2K erases the line. A newline is a failure of its own (the bar must
// never push the result down), so it is returned as found.
func screenLine(s string) (line string, newline bool) {
	var buf []rune
	col := 0
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "\033[2K"):
			buf, i = buf[:0], i+4
			continue
		case s[i] == '\033':
			// Other sequences (colour) take no columns: skip to the final letter.
			j := i + 1
			for j < len(s) && !(s[j] >= '@' && s[j] <= '~' && s[j] != '[') {
				j++
			}
			i = j + 1
			continue
		case s[i] == '\r':
			col, i = 0, i+1
			continue
		case s[i] == '\n':
			return string(buf), true
		}
		r := []rune(s[i:])[0]
		if col < len(buf) {
			buf[col] = r
		} else {
			buf = append(buf, r)
		}
		col++
		i += len(string(r))
	}
	return string(buf), false
}

// Whatever the size, once Done returns the terminal line is blank, so the
// result message that follows starts at column one on a clean line.
func TestProgressIsErasedAtEverySize(t *testing.T) {
	for _, size := range []int64{0, 1, 100, 64 << 10, 3 << 20} {
		for _, known := range []bool{true, false} {
			ios, _, _, errOut := iostreams.Test()
			ios.SetTTY(false, true, true)
			total := size
			if !known {
				total = -1
			}
			p := NewProgress(ios, "table", "Uploading f", total)
			if p == nil {
				t.Fatal("no progress on a terminal")
			}
			n, err := io.Copy(io.Discard, p.Reader(bytes.NewReader(make([]byte, size))))
			if err != nil || n != size {
				t.Fatalf("copy: %d, %v", n, err)
			}
			p.Done()
			line, nl := screenLine(errOut.String())
			if nl || strings.TrimSpace(line) != "" {
				t.Errorf("size %d (known %v): after Done the line shows %q (newline %v); raw %q", size, known, line, nl, errOut.String())
			}
		}
	}
}

func TestNoProgressOffTerminalOrForPrograms(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	if NewProgress(ios, "table", "x", 10) != nil {
		t.Error("progress shown with stderr not a terminal")
	}
	ios.SetTTY(false, true, true)
	if NewProgress(ios, "json", "x", 10) != nil {
		t.Error("progress shown for -o json")
	}
}

// At any width every drawing of the bar fits on the line: one wider than
// the terminal wraps, and each redraw then adds a line (a 40-column
// terminal scrolled 96 lines during one copy).
func TestProgressFitsTheTerminal(t *testing.T) {
	for _, width := range []int{40, 59, 60, 80, 99, 100, 200} {
		for _, total := range []int64{3 << 30, -1} {
			ios, _, _, errOut := iostreams.Test()
			ios.SetTTY(false, true, true)
			ios.SetWidth(width)
			p := NewProgress(ios, "table", "Copying 12345 files from a very long directory name", total)
			// Drawn at each step: the throttle lets the first and the last through.
			for _, n := range []int64{0, 1 << 20, 1 << 30, 3 << 30} {
				p.bar.Set64(n)
				p.bar.RenderBlank()
			}
			drawn := errOut.String()
			p.Done()
			if strings.Contains(drawn, "\n") {
				t.Errorf("width %d, total %d: the bar printed a newline: %q", width, total, drawn)
			}
			for _, seg := range strings.Split(drawn, "\r") {
				if line, _ := screenLine(seg); runewidth.StringWidth(line) > width-1 {
					t.Errorf("width %d, total %d: a drawing %d columns wide: %q", width, total, runewidth.StringWidth(line), line)
				}
			}
		}
	}
}
