package execd

import (
	"errors"
	"os"
	"sync/atomic"
	"time"
)

// drainer reads a command's output pipe. Once the command has exited, it
// still reads everything the pipe held at that moment, however long the
// stream takes to get to it (a slow client holds the reader back), and
// then waits at most drainGrace for more: only children the command left
// behind could still write, and they are not waited for.
type drainer struct {
	f      *os.File
	exited atomic.Bool
	owed   atomic.Int64 // bytes the pipe held at the exit, not read yet
	final  time.Time    // the deadline once owed is paid; reader goroutine only
}

// commandExited is called once the command has exited.
func (d *drainer) commandExited() {
	d.owed.Store(pipeBuffered(d.f))
	d.exited.Store(true)
	// Wakes a read waiting on an empty pipe that children hold open.
	d.f.SetReadDeadline(time.Now().Add(drainGrace))
}

func (d *drainer) Read(p []byte) (int, error) {
	for {
		n, err := d.read(p)
		// A read waiting on the pipe when the command exited got the exit's
		// deadline too: on a loaded machine it can pass before the reader is
		// scheduled for the last bytes the command wrote (both pipes lost
		// their ends so, under load). Bytes the exit counted and that still
		// wait in the pipe are read anyway.
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && d.owed.Load() > 0 && pipeBuffered(d.f) > 0 {
			continue
		}
		return n, err
	}
}

func (d *drainer) read(p []byte) (int, error) {
	// Only a read that starts after the exit pays off owed: one already
	// under way may take bytes the exit's count no longer saw, and counting
	// them would end the drain with bytes of the command still in the pipe.
	// Not counting one that did see them costs one drainGrace at most.
	exited := d.exited.Load()
	if exited {
		if d.owed.Load() > 0 {
			d.f.SetReadDeadline(time.Now().Add(drainGrace))
		} else {
			if d.final.IsZero() {
				d.final = time.Now().Add(drainGrace)
			}
			d.f.SetReadDeadline(d.final)
		}
	}
	n, err := d.f.Read(p)
	if exited {
		d.owed.Add(-int64(n))
	}
	return n, err
}
