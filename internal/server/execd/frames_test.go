package execd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/osb-dev/osb/internal/jsontext"
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
	out := appendOutputFrame([]byte("prefix"), kind, line, false, frameEnd(nil, ts), func(b []byte) []byte {
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

// commandFrames is what a command's pipe reader sends for output read in
// the given pieces: each line's frame, encoded as lineFramer says it may
// be (plain lines copied as they are).
func commandFrames(t testing.TB, pieces ...[]byte) (frames []byte, lines [][]byte) {
	stamp := frameEnd(nil, 1795967002970)
	keep := func(b []byte) []byte { frames = append(frames, b...); return b[:0] }
	var out []byte
	lf := lineFramer{rule: commandLines, emit: func(line []byte, plain bool) {
		if plain && len(line) > 0 && jsontext.Plain(line, true) != len(line) {
			t.Errorf("%q is not plain", line)
		}
		lines = append(lines, bytes.Clone(line))
		out = appendOutputFrame(out, "stdout", line, plain, stamp, keep)
	}}
	for _, p := range pieces {
		lf.write(p)
	}
	lf.flush()
	return append(frames, out...), lines
}

// The frames of lines found plain are encoding/json's too: the plain test
// (which finds the lines' ends as well) misses nothing that needs escaping.
func TestPlainLineFramesAreWhatEncodingJSONWrites(t *testing.T) {
	var in []byte
	for c := range 256 {
		for at := range 20 { // every byte at every place of a 16-byte turn and after
			line := []byte(strings.Repeat("0", 19))
			line = append(append(line[:at:at], byte(c)), line[at:]...)
			in = append(append(in, line...), '\n')
		}
	}
	in = append(in, "^|~ plain, <>&\"\\ not\r\nlast"...)
	checkCommandFrames(t, in)
}

func FuzzPlainLineFrames(f *testing.F) {
	f.Add([]byte("hello\nw<o>rld\r\n~^|\xff\xe2\x80\xa8\n"), 3)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		if cut < 0 || cut > len(in) {
			cut = len(in) / 2
		}
		checkCommandFrames(t, in[:cut], in[cut:])
	})
}

func checkCommandFrames(t *testing.T, pieces ...[]byte) {
	got, lines := commandFrames(t, pieces...)
	var want []byte
	for _, line := range lines {
		want = append(want, marshalledFrame(t, "stdout", line, 1795967002970)...)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got %.300q\nwant %.300q", got, want)
	}
}
