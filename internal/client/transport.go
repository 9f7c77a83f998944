package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

func newTransport(timeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &earlyAnswerConn{Conn: conn}, nil
	}
	t.TLSHandshakeTimeout = timeout
	// A listing walk keeps lookahead+1 requests in flight; with Go's
	// default of two idle connections per host, the others would be
	// closed after each answer and dialled again for the next page.
	t.MaxIdleConnsPerHost = lookahead + 1
	// Streams and transfers have no total timeout, but a server that never
	// starts answering must not hang us.
	t.ResponseHeaderTimeout = timeout
	// A command's output streams at hundreds of megabytes a second, in
	// chunks of tens of kilobytes: read 4 KiB at a time (net/http's
	// default), each chunk would take several reads.
	t.ReadBufferSize = 64 << 10
	return t
}

// earlyAnswerConn gives an answer the server sent before it stopped reading
// a request body the chance to be read. A server (or proxy) that refuses an
// upload part-way, with 413 say, writes its answer and closes; our next
// write then fails, and without this the transport reports the broken pipe
// and drops the answer that already arrived.
type earlyAnswerConn struct {
	net.Conn
	mu     sync.Mutex
	waiter chan struct{} // closed by the next read that completes
}

// earlyAnswerWait bounds how long a failed write waits for that read.
const earlyAnswerWait = 2 * time.Second

func (c *earlyAnswerConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	if c.waiter != nil {
		close(c.waiter)
		c.waiter = nil
	}
	c.mu.Unlock()
	return n, err
}

func (c *earlyAnswerConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		ch := make(chan struct{})
		c.mu.Lock()
		c.waiter = ch
		c.mu.Unlock()
		select {
		case <-ch:
			// Let the reader hand the answer over before the error.
			time.Sleep(5 * time.Millisecond)
		case <-time.After(earlyAnswerWait):
		}
	}
	return n, err
}

// RedirectError is a redirect osb would not follow: to another origin (the
// credentials were given for this one only), from https to http, or one
// that would turn a request into another (a POST answered with 302).
type RedirectError struct {
	Method, From, To string
	Status           int
	Reason           string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server redirected %s %s to %s (HTTP %d); osb did not follow: %s", e.Method, e.From, e.To, e.Status, e.Reason)
}

// checkRedirect follows a redirect only within the origin the request was
// sent to, and only when it repeats the same request.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	refuse := func(reason string) error {
		return &RedirectError{Method: first.Method, From: first.URL.Redacted(), To: req.URL.Redacted(), Status: status, Reason: reason}
	}
	from, to := originOf(first.URL), originOf(req.URL)
	switch {
	case first.URL.Scheme == "https" && req.URL.Scheme != "https":
		return refuse("it leads from https to http, and the credentials would travel in clear text")
	case from != to:
		return refuse("it leads to another origin, and the credentials are only for " + from)
	case req.Method != first.Method:
		return refuse("it would turn the " + first.Method + " into a " + req.Method)
	case len(via) >= 10:
		return refuse("too many redirects")
	}
	return nil
}

// A watchdog cancels an exchange once the server has let it wait too long:
// for bytes of a response body, or to take more of a request body. Time
// spent waiting on anything else (osb's own output, the local file being
// uploaded) does not count.
type watchdog struct {
	idle  time.Duration
	timer *time.Timer
}

// errIdle is the cause a watchdog cancels its exchange with.
type errIdle struct{ d time.Duration }

func (e errIdle) Error() string { return fmt.Sprintf("nothing received for %s", e.d) }

func newWatchdog(idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{idle: idle}
	w.timer = time.AfterFunc(time.Hour, func() { cancel(errIdle{idle}) })
	w.timer.Stop()
	return w
}

func (w *watchdog) waiting() { w.timer.Reset(w.idle) }
func (w *watchdog) served()  { w.timer.Stop() }

// watchedBody is a response body read under a watchdog.
type watchedBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	dog    *watchdog
	what   string // for the error: "GET http://…/files/download"
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.dog.waiting()
	n, err := b.rc.Read(p)
	b.dog.served()
	if err != nil && err != io.EOF {
		var idle errIdle
		if errors.As(context.Cause(b.ctx), &idle) {
			return n, &TimeoutError{What: b.what, Detail: idle.Error()}
		}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.dog.served()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// watchedUpload is a request body under a watchdog: the time between the
// transport taking one piece and coming back for the next is the time the
// server takes to accept it.
type watchedUpload struct {
	r   io.Reader
	dog *watchdog
}

func (u *watchedUpload) Read(p []byte) (int, error) {
	u.dog.served()
	n, err := u.r.Read(p)
	if err == nil {
		u.dog.waiting()
	}
	return n, err
}
