//go:build linux

package cmdtest

import (
	"bytes"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ScreenWait bounds a wait for something to appear on a terminal: a guard
// against a hang, not a measure of speed.
const ScreenWait = time.Minute

// Terminal is a pseudo-terminal for a program under test: it runs on
// Slave; the test types on the master side and reads all it showed.
type Terminal struct {
	T      testing.TB
	Master *os.File
	Slave  *os.File
	mu     sync.Mutex
	shown  bytes.Buffer
}

// NewTerminal opens a pseudo-terminal of the given size (the test is
// skipped where there are none) and reads it until cleanup closes it.
func NewTerminal(t testing.TB, cols, rows int) *Terminal {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skip("no pseudo-terminals here:", err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	pty.Setsize(master, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	tm := &Terminal{T: t, Master: master, Slave: slave}
	go func() {
		b := make([]byte, 32<<10)
		for {
			n, err := master.Read(b)
			tm.mu.Lock()
			tm.shown.Write(b[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return tm
}

// Text is everything the terminal showed so far.
func (tm *Terminal) Text() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.shown.String()
}

// WaitFor waits until re matches what the terminal showed from offset
// from on, and returns the offset where the match ends.
func (tm *Terminal) WaitFor(from int, re string) int {
	tm.T.Helper()
	rx := regexp.MustCompile(re)
	for deadline := time.Now().Add(ScreenWait); ; time.Sleep(10 * time.Millisecond) {
		text := tm.Text()
		if loc := rx.FindStringIndex(text[from:]); loc != nil {
			return from + loc[1]
		}
		if time.Now().After(deadline) {
			tm.T.Fatalf("the terminal never showed %q; it shows:\n%q", re, text[from:])
		}
	}
}

// Send types keys.
func (tm *Terminal) Send(keys string) {
	tm.T.Helper()
	if _, err := tm.Master.WriteString(keys); err != nil {
		tm.T.Fatal(err)
	}
}

// Resize changes the window size; the kernel tells the terminal's
// foreground process group with SIGWINCH.
func (tm *Terminal) Resize(cols, rows int) {
	pty.Setsize(tm.Master, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
}

// Termios is the terminal's current mode.
func (tm *Terminal) Termios() unix.Termios {
	tm.T.Helper()
	tio, err := unix.IoctlGetTermios(int(tm.Slave.Fd()), unix.TCGETS)
	if err != nil {
		tm.T.Fatal(err)
	}
	return *tio
}
