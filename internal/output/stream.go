package output

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/osb-dev/osb/internal/jsontext"
)

// Streamed is a string value of an Obj that WriteJSON writes piece by
// piece: the function writes the string's bytes, unescaped, to w. A large
// text (a command's output) is then never held a second time to be printed.
type Streamed func(w io.Writer) error

// MarshalJSON lets an Obj holding a Streamed value still go through JSON:
// the text is gathered first.
func (s Streamed) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := s(&b); err != nil {
		return nil, err
	}
	return marshal(b.String())
}

// StreamedList is a list value of an Obj that WriteJSON writes item by
// item: the function calls add with each item in turn, as it gets them.
type StreamedList func(add func(item any) error) error

// MarshalJSON lets an Obj holding a StreamedList still go through JSON: the
// items are gathered first.
func (l StreamedList) MarshalJSON() ([]byte, error) {
	items := []any{}
	err := l(func(item any) error {
		switch it := item.(type) {
		case *Indented:
			item = Indented(slices.Clone(*it))
		case *IndentedRun:
			it.each(func(b Indented) { items = append(items, Indented(slices.Clone(b))) })
			return nil
		}
		items = append(items, item)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return marshal(items)
}

// WriteJSON writes o to w exactly as JSON renders it, writing Streamed and
// StreamedList values as they are produced. A value marshalled after a
// StreamedList may depend on what the list held.
func WriteJSON(w io.Writer, o Obj) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(o) == 0 {
		bw.WriteString("{}\n")
		return bw.Flush()
	}
	bw.WriteString("{\n")
	for i, kv := range o {
		key, err := marshal(kv.Key)
		if err != nil {
			return err
		}
		bw.WriteString("  ")
		bw.Write(key)
		bw.WriteString(": ")
		if s, ok := kv.Value.(Streamed); ok {
			str := NewJSONString(bw)
			if err := s(str); err != nil {
				return err
			}
			str.Close()
		} else if l, ok := kv.Value.(StreamedList); ok {
			if err := writeList(bw, l); err != nil {
				return err
			}
		} else {
			v, err := marshal(kv.Value)
			if err != nil {
				return err
			}
			bw.Write(indent(nil, v, "  ", "  "))
		}
		if i < len(o)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// writeList writes a list at the first level of an object, items indented
// as JSON indents them, each written out as soon as it is added.
func writeList(w *bufio.Writer, l StreamedList) error {
	n := 0
	var ind []byte
	err := l(func(item any) error {
		var out []byte
		if run, ok := item.(*IndentedRun); ok {
			return writeRun(w, run, &n)
		} else if b, ok := item.(*Indented); ok {
			out = *b
		} else {
			var err error
			if ind, err = AppendItem(ind[:0], item); err != nil {
				return err
			}
			out = ind
		}
		if n == 0 {
			w.WriteString("[\n    ")
		} else {
			w.WriteString(",\n    ")
		}
		n++
		_, err := w.Write(out)
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		_, err = w.WriteString("[]")
	} else {
		_, err = w.WriteString("\n  ]")
	}
	return err
}

// AppendItem appends v to dst as a StreamedList writes an item: JSON,
// indented at the depth of the list's items.
func AppendItem(dst []byte, v any) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return dst, err
	}
	return indent(dst, b, "    ", "  "), nil
}

// writeRun writes the items of a run as writeList writes each; n counts
// the items written.
func writeRun(w *bufio.Writer, run *IndentedRun, n *int) error {
	if len(run.Ends) == 0 {
		return nil
	}
	lead := ItemSep
	if *n == 0 {
		lead = "[\n    "
	}
	*n += len(run.Ends)
	end := run.Ends[len(run.Ends)-1]
	out := run.JSON[run.Room:end]
	if run.Room >= len(lead) {
		out = run.JSON[run.Room-len(lead) : end]
		copy(out, lead)
	} else {
		w.WriteString(lead)
	}
	if len(out) > w.Available() {
		// Written from out itself rather than copied through w's buffer:
		// bufio writes a slice larger than its buffer straight through
		// once the buffer is empty.
		if err := w.Flush(); err != nil {
			return err
		}
	}
	_, err := w.Write(out)
	return err
}

// JSONString writes one JSON string to an io.Writer as its bytes arrive,
// escaped as encoding/json escapes it without HTML escaping: invalid UTF-8
// becomes U+FFFD, and a character split between two writes is kept whole.
type JSONString struct {
	w     io.Writer
	carry []byte // the start of a character the last write cut off
	buf   []byte
	err   error
}

// NewJSONString starts a string on w: the opening quote is written.
func NewJSONString(w io.Writer) *JSONString {
	s := &JSONString{w: w, carry: make([]byte, 0, utf8.UTFMax)}
	_, s.err = io.WriteString(w, `"`)
	return s
}

func (s *JSONString) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n := len(p)
	s.buf = s.buf[:0]
	if len(s.carry) > 0 {
		// Complete the cut character with the bytes that follow it.
		var tmp [2 * utf8.UTFMax]byte
		head := append(append(tmp[:0], s.carry...), p[:min(len(p), utf8.UTFMax)]...)
		i := 0
		for i < len(s.carry) {
			if !utf8.FullRune(head[i:]) {
				// Still cut off: p was too short to finish it.
				s.carry = append(s.carry[:0], head[i:]...)
				_, s.err = s.w.Write(s.buf)
				return n, s.err
			}
			_, size := utf8.DecodeRune(head[i:])
			s.buf = appendEscaped(s.buf, head[i:i+size])
			i += size
		}
		p = p[i-len(s.carry):]
		s.carry = s.carry[:0]
	}
	// Hold back a character the end of p cuts off.
	if cut := cutRuneStart(p); cut < len(p) {
		s.carry = append(s.carry, p[cut:]...)
		p = p[:cut]
	}
	// In pieces, so that the escaped copy stays small whatever len(p) is.
	for {
		piece := p[:pieceEnd(p, 32<<10)]
		s.buf = appendEscaped(s.buf, piece)
		if _, s.err = s.w.Write(s.buf); s.err != nil {
			return n, s.err
		}
		s.buf, p = s.buf[:0], p[len(piece):]
		if len(p) == 0 {
			return n, nil
		}
	}
}

// pieceEnd is where to cut p near max without splitting a character.
func pieceEnd(p []byte, max int) int {
	if len(p) <= max {
		return len(p)
	}
	end := max
	for end > max-utf8.UTFMax && !utf8.RuneStart(p[end]) {
		end--
	}
	return end
}

// Close writes what is left and the closing quote.
func (s *JSONString) Close() error {
	if s.err != nil {
		return s.err
	}
	b := append(appendEscaped(nil, s.carry), '"')
	_, s.err = s.w.Write(b)
	return s.err
}

// cutRuneStart is where a character that p's end cuts off begins: len(p)
// when p ends on a whole character (or on bytes that are no character).
func cutRuneStart(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			return len(p)
		}
	}
	return len(p)
}

// appendEscaped escapes text as the body of a JSON string, as
// encoding/json does with HTML escaping off.
func appendEscaped(dst, text []byte) []byte {
	dst, _ = jsontext.Append(dst, text, false)
	return dst
}

// Document writes o, whose values may be streamed, as JSON piece by piece;
// when --jq or --template must read the document, or under yaml, it is
// gathered first.
func (p *Printer) Document(o Obj) error {
	if p.Filter.Active() || p.Format != JSONF {
		return p.Data(o)
	}
	return WriteJSON(p.IO.Out, o)
}
