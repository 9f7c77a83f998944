// Package portforward serves a local listener that forwards HTTP,
// WebSocket and server-sent events to a sandbox port through the endpoint
// the lifecycle server hands out, with the headers that endpoint needs.
// The sandbox's port is never assumed to be reachable any other way.
package portforward

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Spec is one [LOCAL:]REMOTE mapping; Local 0 lets the system choose.
type Spec struct {
	Local, Remote int
}

// ParseSpec reads [LOCAL:]REMOTE. REMOTE alone listens on the same port
// number locally, as kubectl does.
func ParseSpec(s string) (Spec, error) {
	local, remote, found := strings.Cut(s, ":")
	if !found {
		local, remote = s, s
	}
	r, err := port(remote, false)
	if err != nil {
		return Spec{}, fmt.Errorf("invalid port mapping '%s': remote port %v", s, err)
	}
	l, err := port(local, true)
	if err != nil {
		return Spec{}, fmt.Errorf("invalid port mapping '%s': local port %v", s, err)
	}
	return Spec{Local: l, Remote: r}, nil
}

func port(s string, zeroOK bool) (int, error) {
	n, err := strconv.Atoi(s)
	low := 1
	if zeroOK {
		low = 0
	}
	if err != nil || n < low || n > 65535 {
		return 0, fmt.Errorf("'%s' is not a number from %d to 65535", s, low)
	}
	return n, nil
}

// Handler forwards every request to base (its path prefix kept), adding
// headers, which replace any the local client sent under the same names.
// Upgrades (WebSocket) are relayed both ways; responses are flushed as they
// come, so server-sent events arrive one by one.
func Handler(base *url.URL, headers map[string]string, transport http.RoundTripper, logf func(string, ...any)) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(base)
			for k, v := range headers {
				pr.Out.Header.Set(k, v)
			}
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.Canceled) {
				return // the local client went away
			}
			logf("osb port-forward: %s %s: %v", r.Method, r.URL.Path, err)
			http.Error(w, "osb port-forward: the sandbox port could not be reached: "+err.Error(), http.StatusBadGateway)
		},
	}
}

// Transport is what the forwarder's requests go through: no timeout on the
// whole exchange (streams and WebSockets last), a bound on connecting.
func Transport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = 0
	return t
}

// Serve answers on ln with h until ctx ends, then closes the listener and
// the connections still open.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		srv.Close()
		<-done
		return nil
	case err := <-done:
		return err
	}
}
