package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// execdStream renders lines as execd frames them: one stdout event per
// line, a ping now and then, the terminal event at the end.
func execdStream(lines []string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"init","text":"6247baac7e0e4db8ace115b4b610f78c","timestamp":1795967002970}` + "\n\n")
	for i, l := range lines {
		text, _ := json.Marshal(l)
		fmt.Fprintf(&b, `{"type":"stdout","text":%s,"timestamp":%d}`+"\n\n", text, 1795967002971+i/1000)
		if i%30000 == 0 {
			b.WriteString(`{"type":"ping","text":"pong","timestamp":1795967002971}` + "\n\n")
		}
	}
	b.WriteString(`{"type":"execution_complete","execution_time":2200,"timestamp":1795967005171}` + "\n\n")
	return b.Bytes()
}

// benchRead reads stream through the reader b.N times; the figure is MB/s
// of stream read.
func benchRead(b *testing.B, stream []byte) {
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewEventReader(bytes.NewReader(stream))
		n := 0
		for r.Scan() {
			n += len(r.Event().Data)
		}
		if r.Err() != nil || n == 0 {
			b.Fatal(r.Err())
		}
	}
}

// base64 output in 76-column lines, the shape of `base64 < bigfile`.
func BenchmarkEventReaderBase64Lines(b *testing.B) {
	raw := make([]byte, 4<<20)
	for i := range raw {
		raw[i] = byte(rand.Uint32())
	}
	enc := base64.StdEncoding.EncodeToString(raw)
	var lines []string
	for len(enc) > 76 {
		lines, enc = append(lines, enc[:76]), enc[76:]
	}
	benchRead(b, execdStream(append(lines, enc)))
}

// Log-like lines with quotes, tabs and the <>& that Go's encoder escapes.
func BenchmarkEventReaderEscapedLines(b *testing.B) {
	lines := make([]string, 50000)
	for i := range lines {
		lines[i] = fmt.Sprintf("2026-11-29T15:43:54Z\tINFO\t<req %d> \"GET /a?b=1&c=2\" -> 200 (%d ms)", i, i%97)
	}
	benchRead(b, execdStream(lines))
}

// One 32 MiB line: read in pieces, never held whole.
func BenchmarkEventReaderHugeLine(b *testing.B) {
	benchRead(b, execdStream([]string{string(bytes.Repeat([]byte("0123456789abcdef"), 2<<20))}))
}

// Short plain lines, the shape of `yes` output: the cost per frame.
func BenchmarkEventReaderShortLines(b *testing.B) {
	lines := make([]string, 200000)
	for i := range lines {
		lines[i] = strings.Repeat("0", 75)
	}
	benchRead(b, execdStream(lines))
}
