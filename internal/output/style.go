package output

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/osb-dev/osb/internal/iostreams"
)

// ANSI SGR codes of the few styles osb uses.
const (
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrMagenta = "35"
	sgrCyan    = "36"
)

// paint wraps s in an ANSI style when on; otherwise s is returned as it is,
// so every caller can style unconditionally.
func paint(on bool, s string, codes ...string) string {
	if !on || s == "" {
		return s
	}
	return "\x1b[" + strings.Join(codes, ";") + "m" + s + "\x1b[0m"
}

// stateColors colours a status by what it means for the user: fine, on its
// way, stopped, or broken. Unknown states stay uncoloured.
var stateColors = map[string]string{
	"running": sgrGreen, "ready": sgrGreen, "healthy": sgrGreen, "true": sgrGreen,
	"created": sgrGreen, "succeeded": sgrGreen,
	"pending": sgrYellow, "creating": sgrYellow, "starting": sgrYellow, "building": sgrYellow, "paused": sgrYellow,
	"stopped": sgrDim, "terminated": sgrDim, "killed": sgrDim, "deleted": sgrDim,
	"error": sgrRed, "failed": sgrRed, "unhealthy": sgrRed, "false": sgrRed,
}

// idColumns are the columns that hold what a user copies into the next command.
var idColumns = map[string]bool{"id": true, "sandbox_id": true, "execution_id": true, "context_id": true}

// boxRunes are the characters of table borders, drawn dim so that the data
// stands out.
const boxRunes = "╭╮╰╯─│┬┴┼├┤"

// dimBorders paints every run of border characters in a rendered table.
func dimBorders(table string) string {
	var b strings.Builder
	var run strings.Builder
	flush := func() {
		b.WriteString(paint(true, run.String(), sgrDim))
		run.Reset()
	}
	for _, r := range table {
		if strings.ContainsRune(boxRunes, r) {
			run.WriteRune(r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

// Printable makes text from a server safe to show on a terminal: control
// characters other than newline and tab are written as escapes, so a
// message cannot move the cursor, change colours or ring the bell.
func Printable(s string) string {
	if strings.IndexFunc(s, isHostile) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isHostile(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isHostile(r rune) bool {
	return unicode.IsControl(r) && r != '\n' && r != '\t'
}

// OneLine is s on a single line: line breaks and runs of blanks become one
// space, and control characters are escaped (see Printable).
func OneLine(s string) string {
	return Printable(strings.Join(strings.Fields(s), " "))
}

// WriteError writes the one line that reports a failed command on stderr,
// "Error:" in bold red on a colour terminal.
func WriteError(ios *iostreams.IOStreams, msg string) {
	fmt.Fprintf(ios.ErrOut, "%s %s\n", paint(ios.ANSIStderr(), "Error:", sgrBold, sgrRed), OneLine(msg))
}

// Problem reports on stderr something that is wrong without being the
// command's failure, such as an unhealthy sandbox: one line, red on a colour
// terminal.
func (p *Printer) Problem(msg string) {
	if p.IO.ColorEnabledStderr() {
		fmt.Fprintf(p.IO.ErrOut, "  ❌ %s\n", paint(p.IO.ANSIStderr(), OneLine(msg), sgrRed))
		return
	}
	fmt.Fprintf(p.IO.ErrOut, "ERROR: %s\n", OneLine(msg))
}

// Note tells a person something about the result on stderr (so stdout
// holds the result alone): one line, dim on a colour terminal. Nothing is
// written under json and yaml, whose data says it already.
func (p *Printer) Note(msg string) {
	if p.Structured() {
		return
	}
	if p.IO.ColorEnabledStderr() {
		fmt.Fprintf(p.IO.ErrOut, "  %s\n", paint(p.IO.ANSIStderr(), OneLine(msg), sgrDim))
		return
	}
	fmt.Fprintf(p.IO.ErrOut, "NOTE: %s\n", OneLine(msg))
}
