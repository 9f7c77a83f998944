package execd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// marshalledFrame is what encoding/json gives for an output line's frame:
// the reference appendOutputFrame must match byte for byte.
func marshalledFrame(t testing.TB, kind string, line []byte, ts int64) []byte {
	f := frame{Type: kind, Text: string(line), Timestamp: ts}
	if !utf8.Valid(line) {
		f.TextBase64 = base64.StdEncoding.EncodeToString(line)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n', '\n')
}

// encodeFrame runs appendOutputFrame with a spill that keeps what it gets,
// and checks that no spill ever held more than textPiece's worth of
// encoding plus one piece.
func encodeFrame(t testing.TB, kind string, line []byte, ts int64) []byte {
	var spilled []byte
	out := appendOutputFrame([]byte("prefix"), kind, line, frameEnd(nil, ts), func(b []byte) []byte {
		if len(b) > writeSize+6*textPiece+64 {
			t.Errorf("a spill of %d bytes", len(b))
		}
		spilled = append(spilled, b...)
		return b[:0]
	})
	got := append(spilled, out...)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("what was in the buffer before is gone: %q", got)
	}
	return got[len("prefix"):]
}

func TestOutputFrameIsWhatEncodingJSONWrites(t *testing.T) {
	t.Parallel()
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	long := strings.Repeat("é<\u2028>x", textPiece) // pieces cut inside characters and escapes
	cases := []string{
		"", "hi", "\n", "\r", "\t\b\f\x00\x01\x1f\x7f", `"quoted" \back\slash/`, "<script>&amp;</script>",
		"\u2028\u2029", "été ünïcödé 日本語 🎉", "\xff", "a\xffb", "\xe2\x82", "\xe2\x82x", "\xed\xa0\x80", // a surrogate
		"\xf4\x90\x80\x80", "\xc0\xaf", string(all), long, long[1:], strings.Repeat("\xff", textPiece+7),
		strings.Repeat("a", textPiece-1) + "é", strings.Repeat("a", textPiece-1) + "\xe2\x82\xac",
	}
	for _, c := range cases {
		for _, kind := range []string{"stdout", "stderr"} {
			got, want := encodeFrame(t, kind, []byte(c), 1795967002970), marshalledFrame(t, kind, []byte(c), 1795967002970)
			if !bytes.Equal(got, want) {
				t.Errorf("%s %.40q:\n got %.200s\nwant %.200s", kind, c, got, want)
			}
		}
	}
}

func FuzzOutputFrame(f *testing.F) {
	for _, s := range []string{"hi", "a\xffb<>&\u2028\x00\"\\", "\xe2\x82", "日本"} {
		f.Add([]byte(s), int64(1795967002970))
	}
	f.Fuzz(func(t *testing.T, line []byte, ts int64) {
		if got, want := encodeFrame(t, "stdout", line, ts), marshalledFrame(t, "stdout", line, ts); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %s\nwant %s", line, got, want)
		}
	})
}
