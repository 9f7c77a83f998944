package image

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"
)

// errStalled ends a registry request that went quiet for too long.
var errStalled = errors.New("registry did not answer in time")

// idleTransport ends a request, headers or body, once the registry has
// sent nothing for idle: a stalled registry fails the pull, while a big
// image on a slow link still comes down.
type idleTransport struct {
	base http.RoundTripper
	idle time.Duration
}

func (t idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(t.idle, func() { cancel(errStalled) })
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cause := context.Cause(ctx)
		cancel(nil)
		if errors.Is(cause, errStalled) {
			return nil, errStalled
		}
		return nil, err
	}
	resp.Body = &idleBody{rc: resp.Body, ctx: ctx, timer: timer, idle: t.idle, cancel: cancel}
	return resp, nil
}

type idleBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	timer  *time.Timer
	idle   time.Duration
	cancel context.CancelCauseFunc
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.timer.Reset(b.idle)
	if err != nil && errors.Is(context.Cause(b.ctx), errStalled) {
		return n, errStalled
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	b.cancel(nil)
	return b.rc.Close()
}
