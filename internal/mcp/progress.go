package mcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress sends progress notifications for one tool call, when the
// client asked for them by giving a progress token; otherwise it does
// nothing.
type progress struct {
	session *mcp.ServerSession
	token   any
	n       float64
}

func newProgress(req *mcp.CallToolRequest) *progress {
	p := &progress{}
	if req != nil && req.Params != nil {
		p.session, p.token = req.Session, req.Params.GetProgressToken()
	}
	return p
}

func (p *progress) enabled() bool { return p.token != nil && p.session != nil }

// report sends one notification. Its progress count only ever grows, as
// the protocol asks; there is no known total. A notification that cannot
// be sent is dropped: it must never fail the call.
func (p *progress) report(ctx context.Context, message string) {
	if !p.enabled() {
		return
	}
	p.n++
	_ = p.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: message})
}
