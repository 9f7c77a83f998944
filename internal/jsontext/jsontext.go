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
// plain ASCII, so Append looks at 8 of them at once.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroes has the high bit set in the byte of x that is zero, if any, and
// none below it (bits above the first zero byte may be set too).
func zeroes(x uint64) uint64 { return (x - ones) & ^x & highs }

// wordTests are the byte tests of special besides the fixed ones, as
// (x|or)^is == 0: x|0x04 is '&' only for '"' and '&', x|0x02 is '>' only
// for '<' and '>'. Without html both are the test for '"'.
type wordTests struct{ or1, is1, or2, is2 uint64 }

var tests = [2]wordTests{
	{0, '"' * ones, 0, '"' * ones},
	{0x04 * ones, '&' * ones, 0x02 * ones, '>' * ones},
}

// special marks, as zeroes does, the first byte of the 8 in x (little
// endian) that Append cannot copy as it is: a control character, a byte
// of a multi-byte character, '\\', and those of wt.
func special(x uint64, wt *wordTests) uint64 {
	t := ((x-0x20*ones)&^x | x) & highs // below 0x20, or from 0x80
	return t | zeroes(x^'\\'*ones) | zeroes((x|wt.or1)^wt.is1) | zeroes((x|wt.or2)^wt.is2)
}

// Append appends p escaped as the inside of a JSON string: invalid UTF-8
// becomes U+FFFD, each invalid byte its own, as encoding/json does. valid
// reports whether p was valid UTF-8. p must not end inside a character
// that continues in the next call's bytes.
func Append(dst, p []byte, html bool) (out []byte, valid bool) {
	table, wt := &plain[0], &tests[0]
	if html {
		table, wt = &plain[1], &tests[1]
	}
	valid = true
	start := 0
	for i := 0; i < len(p); {
		if i+8 <= len(p) {
			t := special(binary.LittleEndian.Uint64(p[i:]), wt)
			if t == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(t) >> 3
		}
		c := p[i]
		if c < utf8.RuneSelf {
			if table[c] {
				i++
				continue
			}
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
