package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// want is what encoding/json writes inside the quotes for s.
func want(t *testing.T, s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

func TestAppendIsWhatEncodingJSONWrites(t *testing.T) {
	cases := []string{"", "plain text", "tab\tnew\nline\r\"q\" back\\slash", "<a href='x'>&amp;</a>",
		"\u2028\u2029", "héllo ✓", "\xff\xfe", "a\xc3", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 too big"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
		// Every byte at every place of a word, and across two.
		for at := range 18 {
			b := []byte("abcdefghijklmnopqr")
			b[at] = byte(c)
			cases = append(cases, string(b))
		}
	}
	cases = append(cases, "0123456789abcdef<\u00e9\"x", "0123456789abcdef\xe2\x80\xa8", "01234567\xe2\x80\xa9tail")
	for _, s := range cases {
		for _, html := range []bool{false, true} {
			got, valid := Append([]byte("pre:"), []byte(s), html)
			if string(got) != "pre:"+want(t, s, html) {
				t.Errorf("html=%v %q: got %q, want %q", html, s, got[4:], want(t, s, html))
			}
			if valid != utf8.ValidString(s) {
				t.Errorf("html=%v %q: valid=%v", html, s, valid)
			}
		}
	}
}

func FuzzAppend(f *testing.F) {
	f.Add([]byte("a<b>&\u2028\xff"))
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, html := range []bool{false, true} {
			if got, _ := Append(nil, p, html); string(got) != want(t, string(p), html) {
				t.Fatalf("html=%v %q: got %q", html, p, got)
			}
		}
	})
}

// BenchmarkAppendLine is a command's typical output line: 75 bytes of
// base64, nothing to escape.
func BenchmarkAppendLine(b *testing.B) {
	line := []byte("SGVsbG8sIHRoaXMgaXMgYSBsaW5lIG9mIGJhc2U2NCB0ZXh0IHRoYXQgZ29lcyBvbiBhbmQgb24u")
	b.SetBytes(int64(len(line)))
	dst := make([]byte, 0, 256)
	for b.Loop() {
		dst, _ = Append(dst[:0], line, true)
	}
}
