package command

import (
	"bufio"
	"io"
	"sync"
	"sync/atomic"

	"github.com/osb-dev/osb/internal/client"
)

// lines prints a stream's output events. execd sends one event per line,
// without its terminator ("\n" stands for an empty line), so each event is
// written as one line, as a local shell shows it. Whether the command's
// last line ended with a newline cannot be known: it always gets one, as
// the official SDKs join lines. A server that keeps terminators in its
// events is printed as it sent them.
//
// Under -o json the lines are kept, once, for the result. Otherwise they
// go to stdout and stderr through buffers that are flushed whenever the
// stream has nothing more at hand, and before the other stream is written:
// output appears as it arrives, in the order it arrived, without a write
// per line.
type lines struct {
	mu             sync.Mutex
	keep           bool // -o json
	out, errOut    *bufio.Writer
	last           *bufio.Writer // written to last, not yet flushed
	stdout, stderr chunks
	// open is set while the last line of a stream came in pieces that
	// have not ended yet: its last byte so far.
	openOut, openErr byte
	err              error       // the first write error; nothing is written after it
	failed           atomic.Bool // err is set: Failed, asked after every event, takes no lock before
	closed           bool
}

func newLines(out, errOut io.Writer, keep bool) *lines {
	return &lines{keep: keep, out: bufio.NewWriterSize(out, 64<<10), errOut: bufio.NewWriterSize(errOut, 64<<10)}
}

// Write takes one output event.
func (l *lines) Write(ev *client.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	open := l.openOf(ev.Type)
	if l.closed || l.err != nil || len(ev.Data) == 0 && !ev.Partial && *open == 0 {
		return // nothing to write to, or an event with no text
	}
	if n := len(ev.Data); n > 0 {
		*open = ev.Data[n-1]
	}
	end := !ev.Partial && *open != '\n'
	if !ev.Partial {
		*open = 0
	}
	if l.keep {
		store := &l.stdout
		if ev.Type == client.EventStderr {
			store = &l.stderr
		}
		store.write(ev.Data)
		if end {
			store.write(newline)
		}
		return
	}
	w := l.out
	if ev.Type == client.EventStderr {
		w = l.errOut
	}
	if l.last != nil && l.last != w {
		l.flushLocked()
	}
	l.last = w
	_, err := w.Write(ev.Data)
	if err == nil && end {
		err = w.WriteByte('\n')
	}
	l.fail(err)
}

// fail records the first write error, if err is one.
func (l *lines) fail(err error) {
	if err != nil && l.err == nil {
		l.err = err
		l.failed.Store(true)
	}
}

var newline = []byte{'\n'}

func (l *lines) openOf(typ string) *byte {
	if typ == client.EventStderr {
		return &l.openErr
	}
	return &l.openOut
}

// Flush writes out what is buffered.
func (l *lines) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *lines) flushLocked() {
	if l.last == nil || l.err != nil {
		return
	}
	l.fail(l.last.Flush())
	l.last = nil
}

// Failed returns the error that stopped the output, if any.
func (l *lines) Failed() error {
	if !l.failed.Load() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// note writes a message of osb's own to stderr, after the output so far.
func (l *lines) note(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	l.errOut.WriteString(msg + "\n")
	l.errOut.Flush()
}

// close ends the output: a line left open by a broken stream is ended, and
// nothing more is written, whatever the stream still sends.
func (l *lines) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if !l.keep && l.err == nil {
		for _, s := range []struct {
			w    *bufio.Writer
			open *byte
		}{{l.out, &l.openOut}, {l.errOut, &l.openErr}} {
			if *s.open != 0 && *s.open != '\n' {
				l.last = s.w
				s.w.WriteByte('\n')
				l.flushLocked()
			}
		}
	}
	l.flushLocked()
	l.closed = true
}

// chunks holds a stream's output for the JSON result: in blocks of a fixed
// size, so that it is held once, without the copies a growing buffer makes.
type chunks struct {
	blocks [][]byte
}

const chunkSize = 1 << 20

func (c *chunks) write(p []byte) {
	for len(p) > 0 {
		if n := len(c.blocks); n == 0 || len(c.blocks[n-1]) == chunkSize {
			c.blocks = append(c.blocks, make([]byte, 0, chunkSize))
		}
		last := &c.blocks[len(c.blocks)-1]
		k := min(len(p), chunkSize-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
}

// writeTo writes the held output to w.
func (c *chunks) writeTo(w io.Writer) error {
	for _, b := range c.blocks {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
