package mcp

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainingTransport holds back the end of the input until every request
// read so far has been answered. The SDK ends a session at the end of its
// input and cancels the calls still running, so a client that writes its
// requests and closes its end (printf … | osb mcp) would lose the answers
// of all but the quickest.
type drainingTransport struct {
	inner mcp.Transport
}

func (t *drainingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainingConn{Connection: conn, pending: map[jsonrpc.ID]bool{}, closed: make(chan struct{})}, nil
}

// drainingConn counts the requests read and not yet answered.
type drainingConn struct {
	mcp.Connection

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool
	answered chan struct{} // closed, and replaced, when a request is answered
	closed   chan struct{}
	once     sync.Once
}

func (c *drainingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.drain(ctx)
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
	return msg, nil
}

func (c *drainingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		if c.answered != nil {
			close(c.answered)
			c.answered = nil
		}
		c.mu.Unlock()
	}
	return err
}

func (c *drainingConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// drain waits until every request read has been answered, the connection
// is closed, or ctx ends (Ctrl-C).
func (c *drainingConn) drain(ctx context.Context) {
	for {
		c.mu.Lock()
		if len(c.pending) == 0 {
			c.mu.Unlock()
			return
		}
		if c.answered == nil {
			c.answered = make(chan struct{})
		}
		answered := c.answered
		c.mu.Unlock()
		select {
		case <-answered:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}
