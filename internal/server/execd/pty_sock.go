//go:build linux

package execd

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A session's socket judges its client by what it takes in, and never
// throws away what was written to it.
//
// A slow client (a long tar stream to a process under strace, a congested
// link) may take longer than ptyWriteTimeout over one frame, and longer
// than a ping's wait to get to the pong queued behind the output: as long
// as it takes data in (writes go on, or the send queue shrinks), it is
// reading, and is not cut off.
//
// The WebSocket library closes the connection 5 s after its close frame at
// the latest, read or not. Closing a socket that still holds unsent data
// makes the kernel drop that data as soon as anything more comes from the
// client (it answers with a reset), and the proxy in front of an isolated
// sandbox's agent drops what it holds when its far side goes away. So the
// connection is half-closed instead, and kept until the client, having
// read everything, closes its end.

// lingerWriter hands the WebSocket library a lingerConn when it takes the
// connection over, and keeps it.
type lingerWriter struct {
	http.ResponseWriter
	conn *lingerConn
}

func (w *lingerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *lingerWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &lingerConn{Conn: c}
	return w.conn, brw, nil
}

// lingerConn is a session's connection. It counts what it writes, so
// that a client taking it in slowly is told from one taking in nothing.
// Its Close ends the sending side, reads (and drops) what the client still
// sends until it closes, and only then closes; a client that takes in
// nothing of what is queued for ptyWriteTimeout is cut off then, as one
// that takes no frame in is.
type lingerConn struct {
	net.Conn
	written atomic.Int64
	once    sync.Once
	err     error
}

// writeChunk is the most written at once: a write returns as the client
// takes its data in, and so counts progress in steps no larger.
const writeChunk = 32 << 10

func (c *lingerConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := c.Conn.Write(p[done:min(len(p), done+writeChunk)])
		done += n
		c.written.Add(int64(n))
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func (c *lingerConn) Close() error {
	c.once.Do(func() {
		c.linger()
		c.err = c.Conn.Close()
	})
	return c.err
}

func (c *lingerConn) linger() {
	hc, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok || hc.CloseWrite() != nil {
		return
	}
	buf := make([]byte, 4096)
	start, last := time.Now(), c.intake()
	for {
		c.Conn.SetReadDeadline(time.Now().Add(ptyWriteTimeout))
		_, err := c.Conn.Read(buf)
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return // the client closed its end: it has everything
		}
		now := c.intake()
		switch {
		case now.queued == 0 && time.Since(start) < ptyLingerMax:
			// The rest is downstream: in a proxy, or the client's kernel.
		case !now.since(last):
			return
		}
		last = now
	}
}

// intake is how far a client got with what was written to it.
type intake struct {
	written int64 // bytes the kernel took
	queued  int   // what the peer has not taken yet (-1: unknown)
}

// since reports progress from before: more was written (a write goes on
// only as the peer takes data in), or the queue shrank.
func (a intake) since(before intake) bool {
	return a.written > before.written || a.queued >= 0 && a.queued < before.queued
}

func (c *lingerConn) intake() intake {
	return intake{written: c.written.Load(), queued: c.queued()}
}

// queued is what the peer has not taken yet of what was written (-1:
// unknown): on TCP the bytes it has not acknowledged, on a unix socket (to
// the server's proxy) the buffers it has not read.
func (c *lingerConn) queued() int {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ); err == nil {
			n = v
		}
	})
	return n
}

// watch calls cut once the client has taken in nothing for
// ptyWriteTimeout, until stop is called.
func (c *lingerConn) watch(cut func()) (stop func()) {
	var mu sync.Mutex
	mu.Lock()
	defer mu.Unlock()
	last, stopped := c.intake(), false
	var t *time.Timer
	t = time.AfterFunc(ptyWriteTimeout, func() {
		mu.Lock()
		defer mu.Unlock()
		now := c.intake()
		switch {
		case stopped:
		case now.since(last):
			last = now
			t.Reset(ptyWriteTimeout)
		default:
			cut()
		}
	})
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
}
