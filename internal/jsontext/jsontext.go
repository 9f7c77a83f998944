// Package jsontext writes bytes as the inside of a JSON string, byte for
// byte as encoding/json writes them, without reflection or copies: for the
// streams (command output in execd, listings in the client) where a
// json.Marshal per value is the cost that matters.
package jsontext

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// plain[html][c] marks the ASCII bytes written as they are: printable, but
// for '"' and '\\', and with html also '<', '>' and '&' (encoding/json's
// default; an Encoder with SetEscapeHTML(false) leaves them).
var plain = func() (t [2][utf8.RuneSelf]bool) {
	for c := byte(' '); c < utf8.RuneSelf; c++ {
		t[0][c] = c != '"' && c != '\\'
		t[1][c] = t[0][c] && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// Word-at-a-time search for the bytes that are not written as they are:
// short lines are most of a command's output, and most of their bytes are
// plain ASCII, so Plain looks at 8 of them at once.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// The word tests below mark, with the high bit of its byte, the first of
// the 8 bytes of x (little endian) that may not be plain, and none before
// it (bits after it may be set too): a byte below 0x20 (borrowing in
// x-0x20*ones), from 0x80 (its own high bit), and one a test value makes
// zero (borrowing in y-ones). A marked byte is looked at again on its own:
// the tests may mark a few plain bytes, never miss one that is not.

// specialText is the test without HTML escaping: '"' and '\\' besides.
func specialText(x uint64) uint64 {
	q, b := x^'"'*ones, x^'\\'*ones
	return ((x-0x20*ones)&^x | x | (q-ones)&^q | (b-ones)&^b) & highs
}

// specialHTML is the test with HTML escaping: x|0x04 is '&' only for '"'
// and '&'; x|0x62 is '~' for '<', '>' and '\\' (and for '^', '|' and '~',
// plain, and control characters, marked anyway).
func specialHTML(x uint64) uint64 {
	q, a := (x|0x04*ones)^'&'*ones, (x|0x62*ones)^'~'*ones
	return ((x-0x20*ones)&^x | x | (q-ones)&^q | (a-ones)&^a) & highs
}

// scanText is how many bytes of p come before the first that specialText
// marks, or the whole words of p when it marks none. Two words a turn: the
// tests' constants and the loop are then paid for once per 16 bytes.
func scanText(p []byte) int {
	i := 0
	for ; i+16 <= len(p); i += 16 {
		a, b := specialText(binary.LittleEndian.Uint64(p[i:i+8])), specialText(binary.LittleEndian.Uint64(p[i+8:i+16]))
		if a|b != 0 {
			return i + marked(a, b)
		}
	}
	if i+8 <= len(p) {
		if t := specialText(binary.LittleEndian.Uint64(p[i : i+8])); t != 0 {
			return i + marked(t, 0)
		}
		i += 8
	}
	return i
}

// scanHTML is scanText with specialHTML.
func scanHTML(p []byte) int {
	i := 0
	for ; i+16 <= len(p); i += 16 {
		a, b := specialHTML(binary.LittleEndian.Uint64(p[i:i+8])), specialHTML(binary.LittleEndian.Uint64(p[i+8:i+16]))
		if a|b != 0 {
			return i + marked(a, b)
		}
	}
	if i+8 <= len(p) {
		if t := specialHTML(binary.LittleEndian.Uint64(p[i : i+8])); t != 0 {
			return i + marked(t, 0)
		}
		i += 8
	}
	return i
}

// marked is the index of the first marked byte of the 16 whose tests are
// a (the first 8) and b; one of them is not 0.
func marked(a, b uint64) int {
	if a != 0 {
		return bits.TrailingZeros64(a) >> 3
	}
	return 8 + bits.TrailingZeros64(b)>>3
}

// Append appends p escaped as the inside of a JSON string: invalid UTF-8
// becomes U+FFFD, each invalid byte its own, as encoding/json does. valid
// reports whether p was valid UTF-8. p must not end inside a character
// that continues in the next call's bytes.
func Append(dst, p []byte, html bool) (out []byte, valid bool) {
	valid = true
	start := 0
	for i := 0; i < len(p); {
		i += Plain(p[i:], html)
		if i == len(p) {
			break
		}
		c := p[i]
		if c < utf8.RuneSelf {
			dst = appendByte(append(dst, p[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, p[start:i]...), `\ufffd`...)
			valid = false
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but not valid JavaScript; encoding/json escapes them.
			dst = append(append(dst, p[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, p[start:]...), valid
}

// Plain is the length of the start of p that Append copies as it is:
// printable ASCII needing no escape. A line reader can find a line's end
// with it (a newline is not plain), and learn at no further cost that the
// line needs no escaping.
func Plain(p []byte, html bool) int {
	table, scan := &plain[0], scanText
	if html {
		table, scan = &plain[1], scanHTML
	}
	i := 0
	for i < len(p) {
		i += scan(p[i:])
		if i == len(p) || p[i] >= utf8.RuneSelf || !table[p[i]] {
			break
		}
		i++
	}
	return i
}

// appendByte appends the escape of one ASCII byte that is not written as
// it is.
func appendByte(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}
