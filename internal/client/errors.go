package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// APIError is any non-2xx answer from a server, whatever shape its body had.
type APIError struct {
	Status    int
	Code      string
	Message   string
	RequestID string
	Method    string
	URL       string
	// RetryAfter is how long the server asked to wait before trying again
	// (429, 503), when it said.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	var extra []string
	extra = append(extra, fmt.Sprintf("HTTP %d", e.Status))
	if e.Code != "" {
		extra = append(extra, "code "+e.Code)
	}
	if e.RequestID != "" {
		extra = append(extra, "request id "+e.RequestID)
	}
	if e.RetryAfter > 0 {
		extra = append(extra, "retry after "+e.RetryAfter.String())
	}
	return fmt.Sprintf("%s (%s)", msg, strings.Join(extra, ", "))
}

// CodeSuffix reports whether the error code ends with suffix; real servers
// prefix codes with their runtime (DOCKER::, KUBERNETES::), so match the end.
func (e *APIError) CodeSuffix(suffix string) bool {
	return strings.HasSuffix(e.Code, suffix)
}

// IsStatus reports whether err is an APIError with the given HTTP status.
func IsStatus(err error, status int) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == status
}

// TimeoutError means a request or a wait ran out of time.
type TimeoutError struct {
	What   string
	Detail string // why, when more than "timed out" is known
	Err    error
}

func (e *TimeoutError) Error() string {
	if e.Detail != "" {
		return e.What + " timed out: " + e.Detail
	}
	return e.What + " timed out"
}
func (e *TimeoutError) Unwrap() error { return e.Err }

// ConnError means the server could not be reached, or dropped the connection
// before answering.
type ConnError struct {
	URL string
	Err error
}

func (e *ConnError) Error() string {
	why := describeNetErr(e.Err)
	if errors.Is(e.Err, io.EOF) || errors.Is(e.Err, io.ErrUnexpectedEOF) {
		why = "the connection closed before a response"
	}
	return fmt.Sprintf("cannot reach %s: %s", e.URL, why)
}
func (e *ConnError) Unwrap() error { return e.Err }

// describeNetErr says what went wrong on a connection in a few words. It
// never repeats a URL: the caller names it, without its password.
func describeNetErr(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "cannot resolve host " + dnsErr.Name
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return opErr.Err.Error()
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err.Error()
	}
	return err.Error()
}

// classify turns a transport error into a TimeoutError, ConnError or
// RedirectError. what and url are shown to the user: no password in them.
func classify(ctx context.Context, what, url string, err error) error {
	var redirect *RedirectError
	if errors.As(err, &redirect) {
		return redirect
	}
	var idle errIdle
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &idle):
		return &TimeoutError{What: what, Detail: idle.Error(), Err: err}
	case cause == errHeaderTimeout:
		return &TimeoutError{What: what, Err: err}
	case ctx.Err() == context.Canceled:
		return context.Canceled
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return &TimeoutError{What: what, Err: err}
	}
	return &ConnError{URL: url, Err: err}
}

// decodeError reads an error body in any of the shapes real servers use:
// {"code","message"}, FastAPI's {"detail":[…]} or {"detail":"…"}, execd's
// {"error":"…"}, or plain text and HTML from proxies.
func decodeError(resp *http.Response, method, url string) *APIError {
	e := &APIError{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID"), Method: method, URL: url}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		e.RetryAfter, _ = retryAfterHeader(resp.Header, time.Now())
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var shaped struct {
		Code    any             `json:"code"`
		Message string          `json:"message"`
		Error   any             `json:"error"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &shaped) != nil {
		e.Message = plainMessage(resp.StatusCode, body)
		return e
	}
	if shaped.Code != nil {
		e.Code = fmt.Sprint(shaped.Code)
	}
	e.Message = shaped.Message
	if e.Message == "" && shaped.Error != nil {
		e.Message = fmt.Sprint(shaped.Error)
	}
	if e.Message == "" && len(shaped.Detail) > 0 {
		e.Message = detailMessage(shaped.Detail)
	}
	return e
}

func plainMessage(status int, body []byte) string {
	text := strings.TrimSpace(string(body))
	if text == "" || strings.HasPrefix(text, "<") {
		return fmt.Sprintf("%s (the server sent a non-JSON response)", http.StatusText(status))
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return text
}

func detailMessage(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var items []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return string(raw)
	}
	parts := make([]string, 0, len(items))
	for _, it := range items {
		loc := make([]string, 0, len(it.Loc))
		for _, l := range it.Loc {
			loc = append(loc, fmt.Sprint(l))
		}
		if len(loc) > 0 {
			parts = append(parts, strings.Join(loc, ".")+": "+it.Msg)
		} else {
			parts = append(parts, it.Msg)
		}
	}
	return strings.Join(parts, "; ")
}
