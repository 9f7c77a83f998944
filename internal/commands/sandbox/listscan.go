package sandbox

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// scan reads JSON from a page's bytes as it checks them, accepting what
// gjson.Valid accepts (the grammar of RFC 8259; bytes outside ASCII are
// not checked, as gjson does not check them). ok turns false at the first
// byte that does not fit, and every read after it does nothing; declined
// says the record being read holds something the pass-through does not
// copy (an escape where a text is printed or a key is matched).
type scan struct {
	b        []byte
	i        int
	ok       bool
	declined bool
	depth    int // of the values skip is in

	// Reused from record to record.
	entry     []text
	meta, ext []pair

	// Where the next backslash is, and the next byte below 0x20 or
	// outside ASCII, once looked for, and the nearer of the two (see
	// plainUntil).
	backslash, odd, plain int
}

func newScan(b []byte) *scan {
	return &scan{b: b, ok: true, backslash: -1, odd: -1, plain: -1}
}

// textByte marks the bytes a string holds as they are; the others are a
// quote, a backslash, a control byte, or outside ASCII.
var textByte = func() (t [256]bool) {
	for c := ' '; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *scan) ws() {
	for s.i < len(s.b) && s.b[s.i] <= ' ' {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the byte that starts the next value, 0 at the end or after a
// failure.
func (s *scan) peek() byte {
	s.ws()
	if !s.ok || s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// open consumes c, which must come next.
func (s *scan) open(c byte) bool {
	if s.peek() != c {
		s.ok = false
		return false
	}
	s.i++
	return true
}

// more reports whether the object or array just opened has another
// member, consuming the comma before it, or its closing byte end; n counts
// the members.
func (s *scan) more(end byte, n *int) bool {
	c := s.peek()
	switch {
	case c == end:
		s.i++
		return false
	case *n == 0 && c != 0:
		*n++
		return true
	case c == ',':
		s.i++
		*n++
		return true
	}
	s.ok = false
	return false
}

// key reads a member's key and its colon; esc says it holds an escape.
func (s *scan) key() (text, bool) {
	if s.peek() != '"' {
		s.ok = false
		return text{}, false
	}
	t, esc := s.str()
	if s.peek() != ':' {
		s.ok = false
		return text{}, false
	}
	s.i++
	return t, esc
}

// text reads a value: a string's text, or unset for any other value. A
// string with an escape declines the record.
func (s *scan) text() text {
	if s.peek() != '"' {
		s.skip()
		return text{}
	}
	t, esc := s.str()
	if esc {
		s.declined = true
	}
	return t
}

// str reads the string at s.i.
func (s *scan) str() (t text, esc bool) {
	start := s.i + 1
	if n := bytes.IndexByte(s.b[start:s.plainUntil(start)], '"'); n >= 0 {
		end := start + n
		s.i = end + 1
		return text{s: s.b[start:end], set: true, ascii: true}, false
	}
	if end, ascii, ok := plainEnd(s.b, start); ok {
		s.i = end + 1
		return text{s: s.b[start:end], set: true, ascii: ascii}, false
	}
	return s.escaped()
}

// plainUntil is where, from b[start] on, the first byte is that a plain
// string of ASCII does not hold: a backslash, a control byte, a byte
// outside ASCII. A page as servers send it has none but perhaps a final
// newline, so a string's end is then its next quote, which IndexByte finds
// many bytes at a time. Both positions only move forward, so the page is
// searched once however many strings it holds.
func (s *scan) plainUntil(start int) int {
	if start > s.plain {
		if s.backslash < start {
			s.backslash = len(s.b)
			if i := bytes.IndexByte(s.b[start:], '\\'); i >= 0 {
				s.backslash = start + i
			}
		}
		if s.odd < start {
			s.odd = start + oddByte(s.b[start:])
		}
		s.plain = min(s.backslash, s.odd)
	}
	return s.plain
}

// oddByte is the index of the first byte of b below 0x20 or outside
// ASCII, len(b) when there is none.
func oddByte(b []byte) int {
	// A byte below 0x20 borrows, setting its high bit; one outside ASCII
	// has it set. A borrow can flag the bytes above a flagged one falsely,
	// never one below, and the bytes are then looked at one by one.
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32 : i+32]
		x, y := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		z, u := binary.LittleEndian.Uint64(w[16:]), binary.LittleEndian.Uint64(w[24:])
		if ((x-spaces)|x|(y-spaces)|y|(z-spaces)|z|(u-spaces)|u)&highBits != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < ' ' || b[i] >= 0x80 {
			return i
		}
	}
	return i
}

// Eight bytes at a time: each byte's high bit, its lowest bit, 0x20, and
// the two bytes a string's text stops at.
const (
	highBits   = 0x8080808080808080
	ones       = 0x0101010101010101
	spaces     = 0x2020202020202020
	quotes     = 0x2222222222222222
	backslashs = 0x5c5c5c5c5c5c5c5c
)

// plainEnd finds the quote that ends a string's text starting at b[i],
// when the text holds neither a backslash nor a control byte (nearly
// every text of a listing), testing a word at a time; ascii says no byte
// of it is outside ASCII. ok is false for any other text.
func plainEnd(b []byte, i int) (end int, ascii, ok bool) {
	var high uint64
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, e := x^quotes, x^backslashs
		// The lowest byte flagged here is the first quote, backslash or
		// byte below 0x20 (a higher one may be flagged falsely).
		m := ((q-ones)&^q | (e-ones)&^e | (x-spaces)&^x) & highBits
		if m == 0 {
			high |= x
			continue
		}
		n := bits.TrailingZeros64(m) / 8
		high |= x & (1<<(8*n) - 1)
		i += n
		return i, high&highBits == 0, b[i] == '"'
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i, high&highBits == 0, true
		case c < ' ' || c == '\\':
			return i, false, false
		default:
			high |= uint64(c)
		}
	}
	return i, false, false
}

// escaped reads, byte by byte, the string at s.i that plainText refused.
func (s *scan) escaped() (t text, esc bool) {
	i, b := s.i+1, s.b
	ascii := true
	for {
		for i < len(b) && textByte[b[i]] {
			i++
		}
		if i >= len(b) {
			s.ok = false
			return text{}, false
		}
		switch c := b[i]; {
		case c == '"':
			t = text{s: b[s.i+1 : i], set: true, ascii: ascii}
			s.i = i + 1
			return t, esc
		case c == '\\':
			esc = true
			if i = escapeEnd(b, i); i < 0 {
				s.ok = false
				return text{}, false
			}
		case c < ' ':
			s.ok = false
			return text{}, false
		default:
			ascii = false
			i++
		}
	}
}

// escapeEnd is where the escape at b[i] ends, -1 when it is no escape.
func escapeEnd(b []byte, i int) int {
	if i+1 >= len(b) {
		return -1
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
		if i+6 > len(b) {
			return -1
		}
		for _, c := range b[i+2 : i+6] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return -1
			}
		}
		return i + 6
	}
	return -1
}

// word consumes the literal w, reporting whether it was there.
func (s *scan) word(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		s.ok = false
		return false
	}
	s.i += len(w)
	return true
}

// maxDepth bounds the nesting skip follows; a page nested deeper is left
// to the decoding.
const maxDepth = 1000

// skip reads past one value of any kind.
func (s *scan) skip() {
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > maxDepth {
		s.ok = false
	}
	switch c := s.peek(); {
	case c == '{':
		s.i++
		for n := 0; s.more('}', &n); {
			s.key()
			s.skip()
		}
	case c == '[':
		s.i++
		for n := 0; s.more(']', &n); {
			s.skip()
		}
	case c == '"':
		s.str()
	case c == 't':
		s.word("true")
	case c == 'f':
		s.word("false")
	case c == 'n':
		s.word("null")
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	default:
		s.ok = false
	}
}

// number reads a number as RFC 8259 writes one.
func (s *scan) number() {
	b, i := s.b, s.i
	digits := func() int {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - start
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		s.ok = false
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			s.ok = false
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			s.ok = false
			return
		}
	}
	s.i = i
}
