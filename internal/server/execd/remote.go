package execd

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
)

// AgentHeader carries, on every answer of a sandbox's agent, the id of that
// agent process: another id means another agent (the last one died and the
// init started a new one). Remote removes it before the answer goes on.
const AgentHeader = "Osb-Agent-Id"

// StreamEndHeader marks an agent's answer that is an event stream sent
// without chunks (its end is the connection's): it ends with StreamEnd,
// which Remote removes. Without it the stream was cut off (the agent died)
// and Remote cuts its own answer off too, as the real execd's connection
// breaks when it dies, rather than end it as if it were complete.
const StreamEndHeader = "Osb-Stream-End"

// StreamEnd is the mark: NUL bytes, which no event (JSON text) holds.
const StreamEnd = "\x00osb-stream-end\x00"

// Watch is what Remote tells about a sandbox's agent; nil fields are not
// called.
type Watch struct {
	Unreachable func(error)     // a request the agent did not answer
	Restarted   func()          // an answer came from another agent than the last one
	NewAgent    func(id string) // the first answer of an agent process (its id), the sandbox's first one included
}

// Remote is the execd API of an isolated sandbox, served by its agent on the
// unix socket sock: requests pass through as they are, streams and
// WebSocket upgrades included, flushed as they come. dropHeaders are
// removed from every request first (credentials meant for this side only).
func Remote(sock string, watch Watch, dropHeaders ...string) http.Handler {
	var d net.Dialer
	target := &url.URL{Scheme: "http", Host: "sandbox"}
	var mu sync.Mutex
	lastAgent := ""
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			for _, h := range dropHeaders {
				pr.Out.Header.Del(h)
			}
		},
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "unix", sock)
			},
			MaxIdleConnsPerHost: 16,
			DisableCompression:  true,
			// A command's stream is hundreds of megabytes a second of
			// chunks of up to writeSize: read in pieces of net/http's
			// default 4 KiB, each chunk costs several reads.
			ReadBufferSize: proxyBuffer,
		},
		FlushInterval: -1,
		BufferPool:    proxyBuffers{},
		// A stream cut off in the middle is an agent's death (the init
		// reports it, the sandbox's events tell it) or a client gone: not
		// a line for the server's stderr in httputil's words.
		ErrorLog: log.New(io.Discard, "", 0),
		ModifyResponse: func(resp *http.Response) error {
			id := resp.Header.Get(AgentHeader)
			resp.Header.Del(AgentHeader)
			if resp.Header.Get(StreamEndHeader) != "" {
				resp.Header.Del(StreamEndHeader)
				resp.Body = &endChecked{body: resp.Body}
			}
			mu.Lock()
			prev := lastAgent
			if id != "" {
				lastAgent = id
			}
			mu.Unlock()
			if id != "" && id != prev && watch.NewAgent != nil {
				watch.NewAgent(id)
			}
			if prev != "" && id != "" && id != prev && watch.Restarted != nil {
				watch.Restarted()
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if watch.Unreachable != nil && r.Context().Err() == nil {
				watch.Unreachable(err)
			}
			writeError(w, http.StatusBadGateway, "RUNTIME_ERROR", "the sandbox's execd is not answering: "+err.Error())
		},
	}
	return FullDuplex(proxy)
}

// proxyBuffer is how much Remote reads from the agent at a time, and
// passes on in one write: a chunk of a command's stream (writeSize).
const proxyBuffer = writeSize

var proxyPool = sync.Pool{New: func() any { return new([proxyBuffer]byte) }}

// proxyBuffers lends Remote's proxy its copy buffers (httputil's own are
// 32 KiB, allocated per request).
type proxyBuffers struct{}

func (proxyBuffers) Get() []byte { return proxyPool.Get().(*[proxyBuffer]byte)[:] }

func (proxyBuffers) Put(b []byte) {
	if len(b) == proxyBuffer {
		proxyPool.Put((*[proxyBuffer]byte)(b))
	}
}

// FullDuplex serves a proxy whose far side may answer while the request
// body is still on its way to it: without full duplex net/http would
// discard the rest of the body as soon as the answer starts, cutting the
// proxied request (and with it the answer) short. In full duplex net/http
// leaves the body to the handler: one that returns with the body unread
// (the far side was down, so nothing read it) makes the server's read of
// the next request on the connection panic ("invalid concurrent Body.Read
// call") and drop the connection. So what is left of the body is read
// (as net/http itself would, up to 256 KiB) once the handler returns, and
// then cut off from a transport goroutine that might still hold it.
func FullDuplex(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		body := &guardedBody{body: r.Body}
		r.Body = body
		defer body.cut()
		h.ServeHTTP(w, r)
		io.Copy(io.Discard, io.LimitReader(body, 256<<10))
	})
}

// guardedBody reads a request body until cut; cut waits for a Read in
// progress to return.
type guardedBody struct {
	mu   sync.Mutex
	body io.ReadCloser
	gone bool
}

func (b *guardedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.body.Read(p)
}

// Close is the transport's; the server closes the real body itself.
func (b *guardedBody) Close() error { return nil }

func (b *guardedBody) cut() {
	b.mu.Lock()
	b.gone = true
	b.mu.Unlock()
}

// endChecked passes on an agent's unchunked stream without its StreamEnd,
// and makes an end without the mark io.ErrUnexpectedEOF: httputil's proxy
// then aborts its answer (http.ErrAbortHandler) and the client sees the
// stream break. Only bytes that may be the start of the mark are held
// back until more come; events, which never hold a NUL, go on at once.
type endChecked struct {
	body io.ReadCloser
	tail [len(StreamEnd)]byte
	held int    // tail[:held], the start of the mark, last read
	owed []byte // read but not yet passed on (a read into a short p)
	err  error  // the body's error, once owed is passed on
}

func (b *endChecked) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(b.owed) > 0 {
			n := copy(p, b.owed)
			b.owed = b.owed[n:]
			if len(b.owed) == 0 {
				return n, b.err
			}
			return n, nil
		}
		buf := p
		if len(p) <= b.held {
			buf = make([]byte, len(b.tail)+512)
		}
		h := copy(buf, b.tail[:b.held])
		n, err := b.body.Read(buf[h:])
		total := h + n
		k := markStart(buf[:total])
		copy(b.tail[:], buf[total-k:total])
		b.held = k
		if err == io.EOF && string(b.tail[:k]) != StreamEnd {
			err = io.ErrUnexpectedEOF
		}
		out := total - k
		if len(buf) > 0 && len(p) > 0 && &buf[0] != &p[0] {
			c := copy(p, buf[:out])
			if c < out {
				b.owed, b.err = buf[c:out], err
				return c, nil
			}
		}
		if out > 0 || err != nil {
			return out, err
		}
	}
}

// markStart is how many of the last bytes of b are the start of StreamEnd.
func markStart(b []byte) int {
	for k := min(len(b), len(StreamEnd)); k > 0; k-- {
		if string(b[len(b)-k:]) == StreamEnd[:k] {
			return k
		}
	}
	return 0
}

func (b *endChecked) Close() error { return b.body.Close() }
