package output

import (
	"slices"
	"unicode/utf8"
)

// IndentedJSON is an item of a StreamedList that writes itself, already
// indented, the same bytes JSON would give it, without reflection: a
// listing of every sandbox writes thousands of records, and encoding each
// by reflection and indenting it again was most of its time.
type IndentedJSON interface {
	WriteIndented(w *IndentWriter)
}

// Indented is JSON already written as IndentedJSON writes it, at the
// depth of a StreamedList's items: added as a *Indented, the list writes
// its bytes as they are. They need only last until add returns (a list
// gathered first copies them), so the caller may reuse them.
type Indented []byte

// MarshalJSON lets a list that is gathered first hold it.
func (b Indented) MarshalJSON() ([]byte, error) { return b, nil }

// ItemSep is what comes between two items of a StreamedList.
const ItemSep = ",\n    "

// IndentedRun is items of a StreamedList written as Indented, one after
// another with ItemSep between them; Ends says where each ends in JSON.
// Added as a *IndentedRun, the list writes them with one write: a listing
// of every sandbox adds a page of records at a time, not each record in
// turn. Like Indented, they need only last until add returns.
type IndentedRun struct {
	JSON []byte
	Ends []int
	// Room is how many bytes before the first item in JSON are free. With
	// room for ItemSep the list writes what comes before the run there,
	// and run and separator go out in one write rather than two.
	Room int
}

// each calls fn with each item of the run.
func (r *IndentedRun) each(fn func(Indented)) {
	start := r.Room
	for _, end := range r.Ends {
		fn(Indented(r.JSON[start:end]))
		start = end + len(ItemSep)
	}
}

// IndentWriter builds indented JSON as JSON indents it: two spaces a
// level after a fixed prefix, empty objects and arrays as {} and [].
// Values are written in order; inside an object each is preceded by Key.
type IndentWriter struct {
	buf    []byte
	prefix string
	first  []bool // per open object or array: nothing written in it yet
}

// Reset empties the writer for a value that starts at the given prefix.
func (w *IndentWriter) Reset(prefix string) {
	w.buf, w.prefix, w.first = w.buf[:0], prefix, w.first[:0]
}

// Bytes is what was written since Reset.
func (w *IndentWriter) Bytes() []byte { return w.buf }

func (w *IndentWriter) newline() {
	w.buf = append(w.buf, '\n')
	w.buf = append(w.buf, w.prefix...)
	for range w.first {
		w.buf = append(w.buf, "  "...)
	}
}

// element starts the next element of the open array, or does nothing for
// a value after its key or at the top.
func (w *IndentWriter) element(inArray bool) {
	if !inArray || len(w.first) == 0 {
		return
	}
	w.sep()
}

func (w *IndentWriter) sep() {
	top := len(w.first) - 1
	if !w.first[top] {
		w.buf = append(w.buf, ',')
	}
	w.first[top] = false
	w.newline()
}

// Open starts an object ('{') or array ('['); inArray says it is an
// element of an array rather than a key's value or the top.
func (w *IndentWriter) Open(c byte, inArray bool) {
	w.element(inArray)
	w.buf = append(w.buf, c)
	w.first = append(w.first, true)
}

// Close ends the innermost object ('}') or array (']').
func (w *IndentWriter) Close(c byte) {
	top := len(w.first) - 1
	empty := w.first[top]
	w.first = w.first[:top]
	if !empty {
		w.newline()
	}
	w.buf = append(w.buf, c)
}

// Key starts a member of the open object.
func (w *IndentWriter) Key(k string) {
	w.sep()
	w.buf = appendString(w.buf, k)
	w.buf = append(w.buf, ": "...)
}

// String writes a string value.
func (w *IndentWriter) String(s string, inArray bool) {
	w.element(inArray)
	w.buf = appendString(w.buf, s)
}

// OptString writes a string, or null for nil.
func (w *IndentWriter) OptString(s *string) {
	if s == nil {
		w.Null()
		return
	}
	w.String(*s, false)
}

// Null writes null as a key's value.
func (w *IndentWriter) Null() { w.buf = append(w.buf, "null"...) }

// Strings writes a list of strings as a key's value (null for nil).
func (w *IndentWriter) Strings(list []string) {
	if list == nil {
		w.Null()
		return
	}
	w.Open('[', false)
	for _, s := range list {
		w.String(s, true)
	}
	w.Close(']')
}

// StringMap writes a map of strings as a key's value, keys sorted as JSON
// sorts them (null for nil).
func (w *IndentWriter) StringMap(m map[string]string) {
	if m == nil {
		w.Null()
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.Open('{', false)
	for _, k := range keys {
		w.Key(k)
		w.String(m[k], false)
	}
	w.Close('}')
}

// appendString writes s as a JSON string, as marshal writes it.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			b = appendEscaped(b, []byte(s))
			return append(b, '"')
		}
	}
	b = append(b, s...)
	return append(b, '"')
}

// Raw writes a value already encoded as compact JSON with nothing to
// indent (a string, a number), as a key's value.
func (w *IndentWriter) Raw(b []byte) { w.buf = append(w.buf, b...) }
