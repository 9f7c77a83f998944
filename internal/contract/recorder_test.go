package contract

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// bodyCap is how much of each body is kept. Longer bodies (large transfers)
// are cut there, and their schema check is skipped.
const bodyCap = 4 << 20

// exchange is one HTTP request and its response, as seen on the wire.
type exchange struct {
	method       string
	url          string // scheme://host/path, no query
	query        string
	reqHeader    http.Header
	reqBody      []byte
	reqTruncated bool

	status        int // 0: no response
	respHeader    http.Header
	respBody      []byte
	respTruncated bool
	respComplete  bool // the body was read to its end
	err           error
}

// recorder is an http.RoundTripper that keeps every exchange passing
// through it. It goes into client.Options.HTTPClient, so osb itself is not
// changed in any way.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	all  []*exchange
}

func newRecorder() *recorder {
	return &recorder{next: http.DefaultTransport.(*http.Transport).Clone()}
}

func (r *recorder) Client() *http.Client { return &http.Client{Transport: r} }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	u := *req.URL
	u.RawQuery = ""
	x := &exchange{method: req.Method, url: u.String(), query: req.URL.RawQuery, reqHeader: req.Header.Clone()}
	if req.Body != nil {
		// Read the body as the server would, keeping up to bodyCap.
		body, truncated, err := capture(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		x.reqBody, x.reqTruncated = body.Bytes(), truncated
		req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body.Bytes()), body.rest))
	}
	r.add(x)
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		x.err = err
		return nil, err
	}
	x.status, x.respHeader = resp.StatusCode, resp.Header.Clone()
	resp.Body = &teeBody{rc: resp.Body, x: x, r: r}
	return resp, nil
}

func (r *recorder) add(x *exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, x)
}

// exchanges returns what was recorded so far and starts afresh.
func (r *recorder) take() []*exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.all
	r.all = nil
	return out
}

// captured is the start of a body, and a reader for whatever followed it.
type captured struct {
	bytes.Buffer
	rest io.Reader
}

func capture(body io.Reader) (*captured, bool, error) {
	c := &captured{rest: eofReader{}}
	n, err := io.Copy(&c.Buffer, io.LimitReader(body, bodyCap+1))
	if err != nil {
		return nil, false, err
	}
	if n > bodyCap {
		// Too big to keep: send it on without holding it all.
		c.rest = body
		return c, true, nil
	}
	return c, false, nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// teeBody keeps a copy of what the client reads of a response.
type teeBody struct {
	rc io.ReadCloser
	x  *exchange
	r  *recorder
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	keep := min(n, max(bodyCap-len(b.x.respBody), 0))
	b.x.respBody = append(b.x.respBody, p[:keep]...)
	if keep < n {
		b.x.respTruncated = true
	}
	if err == io.EOF {
		b.x.respComplete = true
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }
