//go:build linux

package execd

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCommandOutput streams a command printing short lines (base64's
// 76 columns) through execd over real HTTP, to a client that only reads
// the bytes: the cost of execd's side of the stream, in output bytes a
// second.
func BenchmarkCommandOutput(b *testing.B) {
	sb := newSandbox(&testing.T{})
	raw := make([]byte, 15<<20)
	rand.Read(raw)
	text := base64.StdEncoding.EncodeToString(raw)
	lines := make([]byte, 0, len(text)+len(text)/76+1)
	for len(text) > 0 {
		n := min(76, len(text))
		lines = append(append(lines, text[:n]...), '\n')
		text = text[n:]
	}
	file := filepath.Join(b.TempDir(), "out")
	if err := os.WriteFile(file, lines, 0o600); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(handlerFor(sb, Options{}))
	defer srv.Close()
	old := commandTail
	commandTail = 0
	defer func() { commandTail = old }()
	b.SetBytes(int64(len(lines)))
	cpu0 := cpuTime()
	for b.Loop() {
		resp := open(&testing.T{}, "POST", srv.URL+"/command", map[string]string{"command": "cat " + file})
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The wall time of a shared machine says little; the CPU time this
	// process (execd and its client) spent says what the stream costs.
	b.ReportMetric(float64(len(lines))*float64(b.N)/1e6/(cpuTime()-cpu0).Seconds(), "MB/cpu-s")
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLineFrames is the framing alone of what a command's pipe reader
// gets in one read: 64 KiB of 76-byte lines (the row output-lines of
// bench/), cut into lines and encoded as frames into a buffer written
// nowhere. Its ns per line is most of what execd spends on such output.
func BenchmarkLineFrames(b *testing.B) {
	line := append(bytes.Repeat([]byte("0"), 75), '\n')
	read := bytes.Repeat(line, outputChunk/len(line))
	out := make([]byte, 0, writeSize+textPiece)
	spill := func(b []byte) []byte { return b[:0] }
	stamp := frameEnd(nil, 1795967002970)
	lines := lineFramer{rule: commandLines, emit: func(line []byte, plain bool) {
		out = appendOutputFrame(out, "stdout", line, plain, stamp, spill)
	}}
	b.SetBytes(int64(len(read)))
	for b.Loop() {
		lines.write(read)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(len(read)/len(line))), "ns/line")
}
