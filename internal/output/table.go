package output

import (
	"bytes"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// renderTable writes rows under headers: bordered on a terminal, plain
// aligned columns (two spaces apart, no trailing blanks) everywhere else.
func renderTable(w io.Writer, headers []string, rows [][]string, boxed bool) error {
	var buf bytes.Buffer
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
	if boxed {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleRounded)})))
	} else {
		opts = append(opts,
			tablewriter.WithRenderer(renderer.NewBlueprint(plainRendition(headers != nil))),
			tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}))
	}
	t := tablewriter.NewTable(&buf, opts...)
	if headers != nil {
		t.Header(toAny(headers)...)
	}
	for _, r := range rows {
		if err := t.Append(toAny(r)...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if boxed {
		_, err := w.Write(buf.Bytes())
		return err
	}
	return writeTrimmed(w, buf.String())
}

func plainRendition(header bool) tw.Rendition {
	return tw.Rendition{
		Borders: tw.BorderNone,
		Symbols: tw.NewSymbols(tw.StyleNone),
		Settings: tw.Settings{
			Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off, ShowHeader: tw.Off},
			Lines:      tw.Lines{ShowHeaderLine: tw.Off, ShowTop: tw.Off, ShowBottom: tw.Off},
		},
	}
}

func writeTrimmed(w io.Writer, s string) error {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
