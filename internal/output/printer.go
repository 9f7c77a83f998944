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
	// Filter is what --jq or --template made of the json document.
	Filter Filter
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

// Data writes v as JSON or YAML to stdout, or what --jq or --template make
// of its JSON.
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
	if p.Filter.Active() {
		return p.Filter.apply(p.IO.Out, b)
	}
	_, err = p.IO.Out.Write(b)
	return err
}

// Line writes one item of a stream as it arrives: under json one compact
// object per line (or what --jq or --template make of it), under yaml one
// document starting with ---.
func (p *Printer) Line(v any) error {
	var b []byte
	var err error
	switch {
	case p.Filter.Active():
		if b, err = marshal(v); err == nil {
			return p.Filter.apply(p.IO.Out, b)
		}
	case p.Format == YAMLF:
		b, err = YAML(v)
		b = append([]byte("---\n"), b...)
	default:
		b, err = CompactJSON(v)
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

// Panel shows the result of an action (a view or an Obj) as a titled list
// of key: value lines; under json and yaml it is the object itself.
func (p *Printer) Panel(title string, v any) error {
	if p.Structured() {
		return p.Data(v)
	}
	o, err := toObj(v)
	if err != nil {
		return err
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
	_, err = io.WriteString(p.IO.Out, b.String())
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
		rows[i] = []string{kv.Key, Printable(Cell(kv.Value))}
	}
	width := p.IO.TerminalWidth()
	if p.styled() {
		for _, r := range rows {
			r[1] = p.decorate(r[0], r[1])
		}
		p.title(title)
		if !recordFits(rows, width, boxedWidth) {
			return p.stacked([][][]string{rows}, width)
		}
		rows = fitRecord(rows, width, boxedWidth)
		for _, r := range rows {
			r[1] = p.colour(r[0], r[1])
		}
		return p.renderBoxed([]string{"KEY", "VALUE"}, rows)
	}
	if p.IO.StdoutTTY() { // --no-color: plain text, fitted all the same
		if !recordFits(rows, width, plainWidth) {
			return p.stacked([][][]string{rows}, width)
		}
		rows = fitRecord(rows, width, plainWidth)
	}
	return renderTable(p.IO.Out, nil, rows, false)
}

// stacked writes records (rows of key and value) as blocks of lines, for
// a terminal too narrow for their table.
func (p *Printer) stacked(records [][][]string, width int) error {
	blocks := make([][][2]string, len(records))
	for i, rows := range records {
		blocks[i] = make([][2]string, len(rows))
		for j, r := range rows {
			blocks[i][j] = [2]string{r[0], r[1]}
		}
	}
	_, err := io.WriteString(p.IO.Out, stack(blocks, width))
	return err
}

// List shows records as a table, or the whole slice as JSON/YAML. The
// columns are JSON keys (shown upper-cased): those given, else the view's
// `table` tagged fields.
func (p *Printer) List(title string, items any, columns ...string) error {
	if p.Structured() {
		return p.Data(items)
	}
	if len(columns) == 0 {
		if t := elemType(items); t != nil {
			columns = listColumns(t)
		}
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
			rows[i][j] = p.decorate(c, Printable(Cell(v)))
		}
	}
	keep := func(i int) bool { return keepColumns[columns[i]] || isID(columns[i]) || statusColumns[columns[i]] }
	width := p.IO.TerminalWidth()
	measure := boxedWidth
	if !p.styled() {
		if !p.IO.StdoutTTY() {
			return renderTable(p.IO.Out, headers, rows, false) // piped: whole values
		}
		measure = plainWidth // --no-color: plain text, fitted all the same
	}
	fitHeaders, fitRows := fitList(headers, rows, width, keep, measure)
	if measure(columnWidths(fitHeaders, fitRows)) > width {
		// Too narrow even with every cell that may be cut cut short: each
		// item becomes a block of lines, nothing cut.
		if p.styled() {
			p.title(title)
		}
		records := make([][][]string, len(rows))
		for i, r := range rows {
			records[i] = make([][]string, len(r))
			for j, c := range r {
				records[i][j] = []string{headers[j], c}
			}
		}
		return p.stacked(records, width)
	}
	headers, rows = fitHeaders, fitRows
	if !p.styled() {
		return renderTable(p.IO.Out, headers, rows, false)
	}
	for _, r := range rows {
		for j, c := range columns {
			r[j] = p.colour(c, r[j])
		}
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

// decorate adds, on a terminal, the icon of a status cell.
func (p *Printer) decorate(key, cell string) string {
	if !p.styled() || !statusColumns[key] {
		return cell
	}
	return statusIcons[strings.ToLower(cell)] + cell
}

// colour paints a decorated cell on a colour terminal: statuses by what
// they mean, ids bold.
func (p *Printer) colour(key, cell string) string {
	switch {
	case !p.ansi():
		return cell
	case statusColumns[key]:
		state := strings.ToLower(strings.TrimSpace(strings.TrimLeft(cell, "●◐⏸○✗✦✓ ")))
		return paint(stateColors[state] != "", cell, stateColors[state])
	case idColumns[key]:
		return paint(true, cell, sgrBold, sgrCyan)
	}
	return cell
}

var statusColumns = map[string]bool{"status": true, "state": true, "healthy": true}

// keepColumns, with ids and statuses, name the row: fitting a table to the
// terminal never cuts them.
var keepColumns = map[string]bool{"path": true, "name": true, "key": true}

// Text writes s and a newline to stdout whatever the format.
func (p *Printer) Text(s string) error {
	_, err := fmt.Fprintln(p.IO.Out, s)
	return err
}
