package output

import (
	"strings"

	"github.com/mattn/go-runewidth"
)

// A bordered table takes, beyond its cells, one space each side of a cell
// and one border between and around the columns.
func boxedWidth(widths []int) int {
	total := 1
	for _, w := range widths {
		total += w + 3
	}
	return total
}

// minColumn is as narrow as fitting makes a column: enough to tell values
// apart, with the "…" that says more is there.
const minColumn = 5

// columnWidths is the display width of each column's widest cell.
func columnWidths(headers []string, rows [][]string) []int {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = runewidth.StringWidth(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	return widths
}

// fitList makes a list table fit width columns: the widest column that may
// shrink gives up one column at a time until the table fits, and cells (the
// header too) wider than their column end in "…". Columns in keep (ids and
// paths, which people copy, names, statuses) are never cut. A table that cannot fit
// stays as narrow as it gets.
func fitList(headers []string, rows [][]string, width int, keep func(col int) bool) ([]string, [][]string) {
	widths := columnWidths(headers, rows)
	for boxedWidth(widths) > width {
		widest := -1
		for i, w := range widths {
			if !keep(i) && w > minColumn && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
	}
	cut := func(row []string) []string {
		out := make([]string, len(row))
		for i, c := range row {
			out[i] = runewidth.Truncate(c, widths[i], "…")
		}
		return out
	}
	out := make([][]string, len(rows))
	for r, row := range rows {
		out[r] = cut(row)
	}
	return cut(headers), out
}

// fitRecord makes a key/value table fit width columns by wrapping values:
// a record's values are what the user asked to see, so none is cut.
func fitRecord(rows [][]string, width int) [][]string {
	keyWidth := columnWidths([]string{"KEY", "VALUE"}, rows)[0]
	room := max(width-boxedWidth([]int{keyWidth, 0}), 2*minColumn)
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = []string{r[0], wrap(r[1], room)}
	}
	return out
}

// wrap breaks s into lines at most width columns wide, at spaces where it
// can and inside words where it must.
func wrap(s string, width int) string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			for runewidth.StringWidth(word) > width {
				if line != "" {
					lines, line = append(lines, line), ""
				}
				head := runewidth.Truncate(word, width, "")
				lines, word = append(lines, head), word[len(head):]
			}
			switch {
			case line == "":
				line = word
			case runewidth.StringWidth(line)+1+runewidth.StringWidth(word) <= width:
				line += " " + word
			default:
				lines, line = append(lines, line), word
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
