// Command keystroke measures the keystroke echo round trip of a shell run
// on a pseudo-terminal: the time from a key written to the terminal until
// its echo is shown. bench/rows/shell-keys.sh runs it on `osb shell` and, as
// the baseline, on a local bash.
//
//	keystroke -n 200 -- osb shell SANDBOX_ID
//
// It prints the median and the 90th percentile in milliseconds.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/creack/pty"
)

func main() {
	n := flag.Int("n", 200, "keystrokes to time")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: keystroke [-n N] -- COMMAND...")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Env = append(os.Environ(), "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 200, Rows: 50})
	if err != nil {
		fail(err)
	}
	defer cmd.Process.Kill()
	r := newReader(tty)
	tty.WriteString("PS1='RE''ADY> '; bind 'set enable-bracketed-paste off' 2>/dev/null\r")
	r.until([]byte("READY> "), time.Minute)
	var took []time.Duration
	for i := 0; i < *n; i++ {
		key := []byte{'a' + byte(i%26)}
		start := time.Now()
		tty.Write(key)
		r.until(key, 10*time.Second)
		took = append(took, time.Since(start))
		if i%50 == 49 {
			tty.Write([]byte{0x15}) // Ctrl-U: clear the line
			r.drain()
		}
	}
	tty.WriteString("\x15exit\r")
	cmd.Wait()
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("median %.2f ms p90 %.2f ms (%d keystrokes)\n", ms(took[len(took)/2]), ms(took[len(took)*9/10]), len(took))
}

// reader collects what the terminal shows and waits for bytes to appear
// in what is new.
type reader struct {
	chunks chan []byte
	buf    []byte
}

func newReader(f *os.File) *reader {
	r := &reader{chunks: make(chan []byte, 64)}
	go func() {
		for {
			b := make([]byte, 4096)
			n, err := f.Read(b)
			if n > 0 {
				r.chunks <- b[:n]
			}
			if err != nil {
				close(r.chunks)
				return
			}
		}
	}()
	return r
}

func (r *reader) until(want []byte, limit time.Duration) {
	timeout := time.After(limit)
	for !bytes.Contains(r.buf, want) {
		select {
		case b, ok := <-r.chunks:
			if !ok {
				fail(fmt.Errorf("the terminal closed before %q appeared", want))
			}
			r.buf = append(r.buf, b...)
		case <-timeout:
			fail(fmt.Errorf("%q never appeared; the terminal shows %q", want, r.buf))
		}
	}
	r.buf = r.buf[bytes.Index(r.buf, want)+len(want):]
}

// drain drops what the terminal shows for a moment.
func (r *reader) drain() {
	for t := time.After(20 * time.Millisecond); ; {
		select {
		case <-r.chunks:
		case <-t:
			r.buf = nil
			return
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "keystroke:", err)
	os.Exit(1)
}
