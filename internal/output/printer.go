// Package output renders command results as table, json, yaml or raw, and
// renders messages, warnings and errors consistently for every command.
package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/osb-dev/osb/internal/iostreams"
)

// The output formats.
const (
	Table = "table"
	JSONF = "json"
	YAMLF = "yaml"
	Raw   = "raw"
)

// Printer writes one command's results in the format it was asked for.
type Printer struct {
	IO     *iostreams.IOStreams
	Format string
}

// New returns a printer for format (lower-case, already validated).
func New(ios *iostreams.IOStreams, format string) *Printer {
	return &Printer{IO: ios, Format: format}
}

// Structured reports whether the format is json or yaml.
func (p *Printer) Structured() bool { return p.Format == JSONF || p.Format == YAMLF }

// styled reports whether stdout gets icons and borders.
func (p *Printer) styled() bool { return p.IO.ColorEnabled() }

// ansi reports whether stdout also gets colour.
func (p *Printer) ansi() bool { return p.IO.ANSI() }

// Data writes v as JSON or YAML to stdout.
func (p *Printer) Data(v any) error {
	var b []byte
	var err error
	if p.Format == YAMLF {
		b, err = YAML(v)
	} else {
		b, err = JSON(v)
	}
	if err != nil {
		return err
	}
	_, err = p.IO.Out.Write(b)
	return err
}

func (p *Printer) message(status, plainPrefix, icon, msg string) error {
	if p.Structured() {
		return p.Data(Obj{{"status", status}, {"message", msg}})
	}
	if p.styled() {
		_, err := fmt.Fprintf(p.IO.Out, "  %s %s\n", icon, Printable(msg))
		return err
	}
	_, err := fmt.Fprintf(p.IO.Out, "%s %s\n", plainPrefix, Printable(msg))
	return err
}

// Success reports a completed action.
func (p *Printer) Success(msg string) error { return p.message("ok", "OK:", "✅", msg) }

// Info reports something worth knowing that is not a result, like an empty list.
func (p *Printer) Info(msg string) error { return p.message("info", "INFO:", "ℹ️ ", msg) }

// Warning writes to stderr, as an object under json and yaml, so stdout
// only ever holds the result.
func (p *Printer) Warning(msg string) {
	WriteWarning(p.IO, p.Format, msg)
}

// WriteWarning writes a warning to stderr in the style of format: one line
// of text, or an object under json and yaml.
func WriteWarning(ios *iostreams.IOStreams, format, msg string) {
	switch format {
	case JSONF:
		b, _ := JSON(Obj{{"status", "warning"}, {"message", msg}})
		ios.ErrOut.Write(b)
	case YAMLF:
		b, _ := YAML(Obj{{"status", "warning"}, {"message", msg}})
		ios.ErrOut.Write(b)
	default:
		if ios.ColorEnabledStderr() {
			fmt.Fprintf(ios.ErrOut, "  ⚠️  %s\n", paint(ios.ANSIStderr(), OneLine(msg), sgrYellow))
		} else {
			fmt.Fprintf(ios.ErrOut, "WARN: %s\n", OneLine(msg))
		}
	}
}

// Panel shows the result of an action as a titled list of key: value lines;
// under json and yaml it is the object itself.
func (p *Printer) Panel(title string, o Obj) error {
	if p.Structured() {
		return p.Data(o)
	}
	var b strings.Builder
	if p.styled() {
		fmt.Fprintf(&b, "\n  %s\n  %s\n", paint(p.ansi(), "✓ "+title, sgrBold, sgrGreen),
			paint(p.ansi(), strings.Repeat("─", len([]rune(title))+2), sgrDim))
	} else {
		fmt.Fprintf(&b, "--- %s ---\n", title)
	}
	for _, kv := range o {
		fmt.Fprintf(&b, "  %s: %s\n", kv.Key, Printable(Cell(kv.Value)))
	}
	if p.styled() {
		b.WriteByte('\n')
	}
	_, err := io.WriteString(p.IO.Out, b.String())
	return err
}

// Object shows one record: a key/value table, or the record as JSON/YAML.
func (p *Printer) Object(title string, v any) error {
	if p.Structured() {
		return p.Data(v)
	}
	o, err := toObj(v)
	if err != nil {
		return err
	}
	rows := make([][]string, len(o))
	for i, kv := range o {
		rows[i] = []string{kv.Key, p.decorate(kv.Key, Cell(kv.Value))}
	}
	if p.styled() {
		p.title(title)
		return p.renderBoxed([]string{"KEY", "VALUE"}, rows)
	}
	return renderTable(p.IO.Out, nil, rows, false)
}

// List shows records as a table with the given columns (JSON keys, shown
// upper-cased), or the whole slice as JSON/YAML.
func (p *Printer) List(title string, columns []string, items any) error {
	if p.Structured() {
		return p.Data(items)
	}
	objs, err := toObjs(items)
	if err != nil {
		return err
	}
	headers := make([]string, len(columns))
	for i, c := range columns {
		headers[i] = strings.ToUpper(c)
	}
	rows := make([][]string, len(objs))
	for i, o := range objs {
		rows[i] = make([]string, len(columns))
		for j, c := range columns {
			v, _ := o.Get(c)
			rows[i][j] = p.decorate(c, Cell(v))
		}
	}
	if !p.styled() {
		return renderTable(p.IO.Out, headers, rows, false)
	}
	p.title(title)
	return p.renderBoxed(headers, rows)
}

// renderBoxed draws a bordered table on a terminal: with colour, bold
// headers and dim borders.
func (p *Printer) renderBoxed(headers []string, rows [][]string) error {
	painted := make([]string, len(headers))
	for i, h := range headers {
		painted[i] = paint(p.ansi(), h, sgrBold, sgrMagenta)
	}
	var b strings.Builder
	if err := renderTable(&b, painted, rows, true); err != nil {
		return err
	}
	table := b.String()
	if p.ansi() {
		table = dimBorders(table)
	}
	_, err := io.WriteString(p.IO.Out, table)
	return err
}

func toObjs(items any) ([]Obj, error) {
	if objs, ok := items.([]Obj); ok {
		return objs, nil
	}
	generic, err := marshal(items)
	if err != nil {
		return nil, err
	}
	var raws []jsonRaw
	if err := unmarshal(generic, &raws); err != nil {
		return nil, fmt.Errorf("cannot show %T as a table: %w", items, err)
	}
	objs := make([]Obj, len(raws))
	for i, r := range raws {
		if objs[i], err = toObj(r); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

func (p *Printer) title(t string) {
	if t != "" {
		fmt.Fprintf(p.IO.Out, "%s\n", paint(p.ansi(), t, sgrBold, sgrCyan))
	}
}

var statusIcons = map[string]string{
	"running": "● ", "ready": "● ", "healthy": "● ", "true": "● ",
	"pending": "◐ ", "creating": "◐ ", "starting": "◐ ", "building": "◐ ",
	"paused": "⏸ ", "stopped": "○ ", "terminated": "○ ", "killed": "○ ", "deleted": "○ ",
	"error": "✗ ", "failed": "✗ ", "unhealthy": "✗ ",
	"created": "✦ ", "succeeded": "✓ ",
}

// decorate makes a cell safe to print and, on a terminal, adds a status
// icon, and colour to statuses and ids; piped output stays plain text.
func (p *Printer) decorate(key, cell string) string {
	cell = Printable(cell)
	if !p.styled() {
		return cell
	}
	switch {
	case key == "status" || key == "state" || key == "healthy":
		state := strings.ToLower(cell)
		return paint(p.ansi() && stateColors[state] != "", statusIcons[state]+cell, stateColors[state])
	case idColumns[key]:
		return paint(p.ansi(), cell, sgrBold, sgrCyan)
	}
	return cell
}

// Text writes s and a newline to stdout whatever the format.
func (p *Printer) Text(s string) error {
	_, err := fmt.Fprintln(p.IO.Out, s)
	return err
}
