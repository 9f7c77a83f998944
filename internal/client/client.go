// Package client speaks the OpenSandbox HTTP contracts: the lifecycle API and,
// through endpoints the lifecycle server hands out, the per-sandbox data plane
// (execd, the egress sidecar). It knows nothing about commands or output.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// HeaderAPIKey carries the API key on lifecycle calls.
const HeaderAPIKey = "OPEN-SANDBOX-API-KEY"

// Options configures a Client.
type Options struct {
	Domain   string // host[:port][/path], or the same with an http or https scheme
	Protocol string // http or https, for a domain without a scheme
	APIKey   string
	// RequestTimeout bounds connecting and waiting for the answer's headers
	// on every call, and the whole exchange of a plain (non-stream) call.
	RequestTimeout time.Duration
	// IdleTimeout ends a stream or a transfer that has gone this long
	// without a byte in either direction; 0 means DefaultIdleTimeout.
	IdleTimeout    time.Duration
	UseServerProxy bool
	ExecdToken     string    // sent as X-EXECD-ACCESS-TOKEN on data-plane calls when set
	UserAgent      string    // e.g. osb/1.2.3
	Debug          io.Writer // when set, one line per HTTP exchange
	HTTPClient     *http.Client
	RetryBase      time.Duration // first retry delay; 0 means 300ms
}

// DefaultIdleTimeout is how long a stream or a transfer may go without a
// byte. execd sends a ping every 3 s on an execution stream, so only a
// server that has stopped working stays silent this long.
const DefaultIdleTimeout = 60 * time.Second

// MaxResponseBytes caps the body of a plain (non-stream) answer: the largest
// list page or record is far smaller, and a server that sends more is
// broken or hostile. Streams and downloads have no cap.
const MaxResponseBytes = 64 << 20

// Client talks to one lifecycle server and the data planes it points at.
type Client struct {
	opts      Options
	addr      address // the lifecycle server; base ends in /v1
	http      *http.Client
	endpoints sync.Map // endpointKey → *Endpoint, for this process only
	wsOnce    sync.Once
	ws        *http.Client // for WebSocket handshakes (pty.go)
}

// New builds a client; it makes no request. An address no request can be
// built from is an error here.
func New(opts Options) (*Client, error) {
	proto := strings.ToLower(strings.TrimSpace(opts.Protocol))
	if proto == "" {
		proto = "http"
	}
	if proto != "http" && proto != "https" {
		return nil, fmt.Errorf("invalid protocol %q: use http or https", opts.Protocol)
	}
	opts.Protocol = proto
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.RetryBase == 0 {
		opts.RetryBase = 300 * time.Millisecond
	}
	addr, err := parseAddress(proto, opts.Domain)
	if err != nil {
		return nil, fmt.Errorf("invalid domain: %w", err)
	}
	addr.base += "/v1"
	addr.display += "/v1"
	c := &Client{opts: opts, addr: addr}
	hc := http.Client{Transport: newTransport(opts.RequestTimeout)}
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	hc.CheckRedirect = checkRedirect
	c.http = &hc
	return c, nil
}

// Options returns the options the client was built with.
func (c *Client) Options() Options { return c.opts }

// Request is one HTTP call. Path is appended to the base by plain string
// concatenation, never URL resolution, so endpoint path prefixes survive.
type Request struct {
	Method      string
	Path        string
	Query       url.Values
	JSON        any       // encoded as the body when set
	Body        io.Reader // a raw body; never retried
	BodyLength  int64     // Body's length when known (> 0), else it is sent chunked
	ContentType string
	Header      http.Header
}

// target is where a request goes, the lifecycle server or a data plane,
// with the credentials that belong to it.
type target struct {
	addr    address
	headers map[string]string
}

func (c *Client) lifecycle() target {
	h := map[string]string{}
	if c.opts.APIKey != "" {
		h[HeaderAPIKey] = c.opts.APIKey
	}
	return target{addr: c.addr, headers: h}
}

// Do sends a lifecycle request and decodes a JSON answer into out (nil: discard,
// *[]byte or *bytes.Buffer: the raw body). It returns the response headers.
func (c *Client) Do(ctx context.Context, r *Request, out any) (http.Header, error) {
	return c.do(ctx, c.lifecycle(), r, out)
}

// Stream sends a lifecycle request and hands back the open response (see
// stream). The caller closes the body.
func (c *Client) Stream(ctx context.Context, r *Request) (*http.Response, error) {
	return c.stream(ctx, c.lifecycle(), r)
}

// do is a plain call: the request timeout bounds all of it, and the body
// read is capped.
func (c *Client) do(ctx context.Context, t target, r *Request, out any) (http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	resp, err := c.send(ctx, t, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	what := r.Method + " " + t.addr.display + r.Path
	if err := decodeBody(resp.Body, resp.ContentLength, out); err != nil {
		if ctx.Err() != nil {
			return nil, classify(ctx, what, t.addr.display+r.Path, ctx.Err())
		}
		var bad *BadResponseError
		if errors.As(err, &bad) {
			bad.What, bad.Status = what, resp.StatusCode
			return nil, bad
		}
		return nil, fmt.Errorf("cannot read the response to %s: %s", what, describeNetErr(err))
	}
	return resp.Header, nil
}

// BadResponseError is a 2xx answer osb cannot use: empty or null where a
// record was expected, larger than MaxResponseBytes, or not the JSON the
// call returns.
type BadResponseError struct {
	What   string // "GET http://…/v1/sandboxes/x"
	Status int
	Reason string
}

func (e *BadResponseError) Error() string {
	return fmt.Sprintf("the server answered %s with %s (HTTP %d)", e.What, e.Reason, e.Status)
}

func decodeBody(body io.Reader, size int64, out any) error {
	limited := &io.LimitedReader{R: body, N: MaxResponseBytes + 1}
	tooLarge := &BadResponseError{Reason: fmt.Sprintf("a body larger than %d MiB, more than osb reads for one answer", MaxResponseBytes>>20)}
	if out == nil {
		_, err := io.Copy(io.Discard, limited)
		return err
	}
	switch raw := out.(type) {
	case *[]byte:
		b, err := readBody(limited, size)
		if err == nil && len(b) > MaxResponseBytes {
			return tooLarge
		}
		*raw = b
		return err
	case *bytes.Buffer:
		if size > 0 && size <= MaxResponseBytes {
			// Room for all of it and the read that finds its end.
			raw.Grow(int(size) + bytes.MinRead)
		}
		_, err := raw.ReadFrom(limited)
		if err == nil && raw.Len() > MaxResponseBytes {
			return tooLarge
		}
		return err
	}
	// Decoded as it is read, in one pass over the body.
	br := bufio.NewReaderSize(limited, 32<<10)
	first, err := firstByte(br)
	switch {
	case err == io.EOF:
		return &BadResponseError{Reason: "an empty body where a record was expected"}
	case err != nil:
		return err
	case first == 'n':
		if word, _ := br.Peek(4); string(word) == "null" {
			return &BadResponseError{Reason: "null where a record was expected"}
		}
	}
	if err := json.NewDecoder(br).Decode(out); err != nil {
		if limited.N <= 0 {
			return tooLarge
		}
		if _, isSyntax := err.(*json.SyntaxError); isSyntax || err == io.ErrUnexpectedEOF {
			return &BadResponseError{Reason: "a body that is not the expected JSON (" + err.Error() + ")"}
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return &BadResponseError{Reason: "a body that is not the expected JSON (" + err.Error() + ")"}
		}
		return err
	}
	// The rest is read, so that the connection can be used again.
	if _, err := io.Copy(io.Discard, br); err != nil {
		return err
	}
	if limited.N <= 0 {
		return tooLarge
	}
	return nil
}

// readBody is io.ReadAll with the buffer sized for size bytes (-1: unknown).
func readBody(r io.Reader, size int64) ([]byte, error) {
	var b bytes.Buffer
	if size > 0 {
		b.Grow(int(min(size, MaxResponseBytes)) + bytes.MinRead)
	}
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// firstByte skips white space and returns the first byte after it,
// without consuming it.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c, br.UnreadByte()
		}
	}
}

// stream is a call whose body is read at the caller's pace: a stream, a
// download, an upload. Connecting and waiting for the answer's headers are
// bounded by the request timeout, the body by the idle timeout: it fails
// once the server has sent nothing (or taken nothing) for that long.
func (c *Client) stream(ctx context.Context, t target, r *Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	dog := newWatchdog(c.opts.IdleTimeout, cancel)
	req := *r
	if r.Body != nil {
		req.Body = &watchedUpload{r: r.Body, dog: dog}
	} else {
		// Without a body to send, connecting and the answer's headers
		// share one budget.
		headers := time.AfterFunc(c.opts.RequestTimeout, func() { cancel(errHeaderTimeout) })
		defer headers.Stop()
	}
	resp, err := c.send(ctx, t, &req)
	dog.served()
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = &watchedBody{rc: resp.Body, ctx: ctx, cancel: cancel, dog: dog, what: r.Method + " " + t.addr.display + r.Path}
	return resp, nil
}

// errHeaderTimeout is the cause a stream's request is cancelled with when
// its answer did not start within the request timeout.
var errHeaderTimeout = errors.New("no answer within the request timeout")

// send performs the exchange with retries and returns a 2xx response or an error.
func (c *Client) send(ctx context.Context, t target, r *Request) (*http.Response, error) {
	var payload []byte
	if r.JSON != nil {
		b, err := json.Marshal(r.JSON)
		if err != nil {
			return nil, err
		}
		payload = b
	}
	retryable := r.Body == nil && idempotent(r.Method)
	display := t.addr.display + r.Path
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, t, r, payload)
		wait, again := c.retryAfter(ctx, attempt, retryable, resp, err)
		if !again {
			if err != nil {
				return nil, err
			}
			if resp.StatusCode >= 300 {
				defer resp.Body.Close()
				return nil, decodeError(resp, r.Method, display)
			}
			return resp, nil
		}
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
			return nil, classify(ctx, r.Method+" "+display, display, ctx.Err())
		case <-time.After(wait):
		}
	}
}

const maxRetries = 3

// maxRetryWait is the longest osb waits before trying again; a server that
// asks for more (Retry-After) gets its error reported instead.
const maxRetryWait = 10 * time.Second

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// retryAfter decides whether to try again and how long to wait first. A
// wait the server asks for that is longer than maxRetryWait, or than what
// is left of the call's time, is not waited: the answer is reported as it is.
func (c *Client) retryAfter(ctx context.Context, attempt int, retryable bool, resp *http.Response, err error) (time.Duration, bool) {
	if !retryable || attempt >= maxRetries {
		return 0, false
	}
	backoff := c.opts.RetryBase << attempt
	if err != nil {
		return backoff, errors.Is(err, syscall.ECONNRESET)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return 0, false
	}
	wait := backoff
	if d, ok := retryAfterHeader(resp.Header, time.Now()); ok {
		wait = d
	}
	if deadline, ok := ctx.Deadline(); wait > maxRetryWait || ok && time.Until(deadline) < wait {
		return 0, false
	}
	return wait, true
}

// retryAfterHeader reads Retry-After: seconds, or an HTTP date.
func retryAfterHeader(h http.Header, now time.Time) (time.Duration, bool) {
	s := strings.TrimSpace(h.Get("Retry-After"))
	if s == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil && secs >= 0 {
		return time.Duration(min(secs, 1<<32)) * time.Second, true
	}
	if at, err := http.ParseTime(s); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

func (c *Client) once(ctx context.Context, t target, r *Request, payload []byte) (*http.Response, error) {
	query := ""
	if len(r.Query) > 0 {
		query = "?" + r.Query.Encode()
	}
	body := r.Body
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, t.addr.base+r.Path+query, body)
	if err != nil {
		return nil, fmt.Errorf("cannot build the request %s %s: %s", r.Method, t.addr.display+r.Path, requestBuildError(err))
	}
	if r.BodyLength > 0 {
		req.ContentLength = r.BodyLength
	}
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	if c.opts.UserAgent != "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	c.logExchange(req, resp, err, time.Since(start))
	if err != nil {
		display := t.addr.display + r.Path
		return nil, classify(ctx, r.Method+" "+display+query, display, err)
	}
	return resp, nil
}

// requestBuildError says why a URL was refused without repeating it (it
// may hold a password).
func requestBuildError(err error) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err.Error()
	}
	return err.Error()
}

// logExchange writes one -v line. Only the method, URL, status, time and
// request id are logged: headers (and so the API key) never are.
func (c *Client) logExchange(req *http.Request, resp *http.Response, err error, took time.Duration) {
	if c.opts.Debug == nil {
		return
	}
	status, rid := "error: "+fmt.Sprint(err), ""
	if resp != nil {
		status = strconv.Itoa(resp.StatusCode)
		rid = resp.Header.Get("X-Request-ID")
	}
	// A tenth of a millisecond: local exchanges take less than one.
	line := fmt.Sprintf("* %s %s -> %s (%s)", req.Method, req.URL.Redacted(), status, took.Round(100*time.Microsecond))
	if rid != "" {
		line += " request-id=" + rid
	}
	fmt.Fprintln(c.opts.Debug, line)
}
