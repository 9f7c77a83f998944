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

// plainWidth is the width of a table without borders: columns two spaces
// apart.
func plainWidth(widths []int) int {
	total := 0
	for i, w := range widths {
		total += w
		if i > 0 {
			total += 2
		}
	}
	return total
}

// isID reports whether a column or a record's key holds an id: what people
// copy into the next command, so it is never cut or wrapped.
func isID(key string) bool {
	key = strings.ToLower(key)
	return idColumns[key] || key == "id" || strings.HasSuffix(key, "_id")
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
func fitList(headers []string, rows [][]string, width int, keep func(col int) bool, measure func([]int) int) ([]string, [][]string) {
	widths := columnWidths(headers, rows)
	for measure(widths) > width {
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

// recordRoom is the width a record's values get beside the widest key,
// in a table of measure's kind.
func recordRoom(rows [][]string, width int, measure func([]int) int) int {
	keyWidth := columnWidths([]string{"KEY", "VALUE"}, rows)[0]
	return width - measure([]int{keyWidth, 0})
}

// recordFits reports whether a key/value table can fit width columns with
// its values wrapped and its ids whole.
func recordFits(rows [][]string, width int, measure func([]int) int) bool {
	room := recordRoom(rows, width, measure)
	if room < 2*minColumn {
		return false
	}
	for _, r := range rows {
		if isID(r[0]) && runewidth.StringWidth(r[1]) > room {
			return false
		}
	}
	return true
}

// fitRecord makes a key/value table fit width columns by wrapping values:
// a record's values are what the user asked to see, so none is cut.
func fitRecord(rows [][]string, width int, measure func([]int) int) [][]string {
	room := max(recordRoom(rows, width, measure), 2*minColumn)
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = []string{r[0], wrap(r[1], room)}
	}
	return out
}

// stack writes records, one block of "KEY  value" lines each, blank lines
// between them: the layout of a table too wide for the terminal even with
// its cells cut (ids are never cut). A value that does not fit beside its
// key wraps beside it, or under it; an id, or a value of one word such as a
// time, that does not fit goes whole on a line of its own.
func stack(records [][][2]string, width int) string {
	var b strings.Builder
	for i, rows := range records {
		if i > 0 {
			b.WriteByte('\n')
		}
		keyWidth := 0
		for _, kv := range rows {
			keyWidth = max(keyWidth, runewidth.StringWidth(kv[0]))
		}
		room := width - keyWidth - 2
		indent := strings.Repeat(" ", keyWidth+2)
		for _, kv := range rows {
			key, val := kv[0], kv[1]
			id := isID(key)
			vw := runewidth.StringWidth(val)
			// One word (an id, a time) is broken only when no line holds it.
			whole := id || (!strings.ContainsAny(val, " \n") && vw <= width-2)
			switch {
			case vw <= room:
				b.WriteString(runewidth.FillRight(key, keyWidth) + "  " + val + "\n")
			case whole && runewidth.StringWidth(key)+2+vw <= width:
				b.WriteString(key + "  " + val + "\n")
			case !whole && room >= 2*minColumn:
				lines := strings.Split(wrap(val, room), "\n")
				b.WriteString(runewidth.FillRight(key, keyWidth) + "  " + lines[0] + "\n")
				for _, l := range lines[1:] {
					b.WriteString(indent + l + "\n")
				}
			default:
				b.WriteString(key + "\n")
				pad := "  "
				if !whole {
					val = wrap(val, max(width-2, minColumn))
				} else if vw+2 > width {
					pad = "" // an id as wide as the terminal: whole, unindented
				}
				for _, l := range strings.Split(val, "\n") {
					b.WriteString(pad + l + "\n")
				}
			}
		}
	}
	return b.String()
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
