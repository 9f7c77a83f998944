// Package client speaks the OpenSandbox HTTP contracts: the lifecycle API and,
// through endpoints the lifecycle server hands out, the per-sandbox data plane
// (execd, the egress sidecar). It knows nothing about commands or output.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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
	Domain         string // host[:port], or a URL with scheme
	Protocol       string // http or https
	APIKey         string
	RequestTimeout time.Duration // whole exchange for plain calls; headers only for streams
	UseServerProxy bool
	ExecdToken     string    // sent as X-EXECD-ACCESS-TOKEN on data-plane calls when set
	UserAgent      string    // e.g. osb/1.2.3
	Debug          io.Writer // when set, one line per HTTP exchange
	HTTPClient     *http.Client
	RetryBase      time.Duration // first retry delay; 0 means 300ms
}

// Client talks to one lifecycle server and the data planes it points at.
type Client struct {
	opts      Options
	base      string // lifecycle base URL ending in /v1
	http      *http.Client
	endpoints sync.Map // endpointKey → *Endpoint, for this process only
	wsOnce    sync.Once
	ws        *http.Client // for WebSocket handshakes (pty.go)
}

// New builds a client; it makes no request.
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
	if opts.RetryBase == 0 {
		opts.RetryBase = 300 * time.Millisecond
	}
	c := &Client{opts: opts, base: joinBase(proto, opts.Domain) + "/v1", http: opts.HTTPClient}
	if c.http == nil {
		c.http = &http.Client{Transport: newTransport(opts.RequestTimeout)}
	}
	return c, nil
}

func newTransport(timeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = timeout
	// Streams and transfers have no total timeout, but a server that never
	// starts answering must not hang us.
	t.ResponseHeaderTimeout = timeout
	return t
}

// joinBase prefixes the protocol unless the address already carries a scheme.
func joinBase(proto, addr string) string {
	addr = strings.TrimRight(addr, "/")
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return addr
	}
	return proto + "://" + addr
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

// target is where a request goes: the lifecycle server or a data plane.
type target struct {
	base    string
	headers map[string]string
}

func (c *Client) lifecycle() target {
	h := map[string]string{}
	if c.opts.APIKey != "" {
		h[HeaderAPIKey] = c.opts.APIKey
	}
	return target{base: c.base, headers: h}
}

// Do sends a lifecycle request and decodes a JSON answer into out (nil: discard,
// *[]byte: raw body). It returns the response headers.
func (c *Client) Do(ctx context.Context, r *Request, out any) (http.Header, error) {
	return c.do(ctx, c.lifecycle(), r, out)
}

// Stream sends a lifecycle request and hands back the open response; only the
// wait for headers is bounded. The caller closes the body.
func (c *Client) Stream(ctx context.Context, r *Request) (*http.Response, error) {
	return c.stream(ctx, c.lifecycle(), r)
}

func (c *Client) do(ctx context.Context, t target, r *Request, out any) (http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	resp, err := c.send(ctx, t, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := decodeBody(resp.Body, out); err != nil {
		if ctx.Err() != nil {
			return nil, classify(ctx, r.Method+" "+r.Path, t.base+r.Path, ctx.Err())
		}
		return nil, fmt.Errorf("cannot read the response to %s %s: %w", r.Method, r.Path, err)
	}
	return resp.Header, nil
}

func decodeBody(body io.Reader, out any) error {
	switch o := out.(type) {
	case nil:
		_, err := io.Copy(io.Discard, body)
		return err
	case *[]byte:
		b, err := io.ReadAll(body)
		*o = b
		return err
	default:
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		return json.Unmarshal(b, out)
	}
}

func (c *Client) stream(ctx context.Context, t target, r *Request) (*http.Response, error) {
	return c.send(ctx, t, r)
}

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
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, t, r, payload)
		wait, again := c.retryAfter(attempt, retryable, resp, err)
		if !again {
			if err != nil {
				return nil, err
			}
			if resp.StatusCode >= 300 {
				defer resp.Body.Close()
				return nil, decodeError(resp, r.Method, t.base+r.Path)
			}
			return resp, nil
		}
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
			return nil, classify(ctx, r.Method+" "+r.Path, t.base+r.Path, ctx.Err())
		case <-time.After(wait):
		}
	}
}

const maxRetries = 3

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// retryAfter decides whether to try again and how long to wait first.
func (c *Client) retryAfter(attempt int, retryable bool, resp *http.Response, err error) (time.Duration, bool) {
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
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, perr := strconv.Atoi(s); perr == nil && secs >= 0 {
			return min(time.Duration(secs)*time.Second, 10*time.Second), true
		}
	}
	return backoff, true
}

func (c *Client) once(ctx context.Context, t target, r *Request, payload []byte) (*http.Response, error) {
	u := t.base + r.Path
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	body := r.Body
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return nil, err
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
		return nil, classify(ctx, r.Method+" "+u, u, err)
	}
	return resp, nil
}

// logExchange writes one -v line. Only the method, URL, status, time and
// request id are logged: headers (and so the API key) never are.
func (c *Client) logExchange(req *http.Request, resp *http.Response, err error, took time.Duration) {
	if c.opts.Debug == nil {
		return
	}
	u := *req.URL
	u.User = nil
	status, rid := "error: "+fmt.Sprint(err), ""
	if resp != nil {
		status = strconv.Itoa(resp.StatusCode)
		rid = resp.Header.Get("X-Request-ID")
	}
	// A tenth of a millisecond: local exchanges take less than one.
	line := fmt.Sprintf("* %s %s -> %s (%s)", req.Method, u.String(), status, took.Round(100*time.Microsecond))
	if rid != "" {
		line += " request-id=" + rid
	}
	fmt.Fprintln(c.opts.Debug, line)
}
