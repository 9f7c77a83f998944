package execd

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// Remote is the execd API of an isolated sandbox, served by its agent on the
// unix socket sock: requests pass through as they are, streams and
// WebSocket upgrades included, flushed as they come. dropHeaders are
// removed from every request first (credentials meant for this side only).
func Remote(sock string, dropHeaders ...string) http.Handler {
	var d net.Dialer
	target := &url.URL{Scheme: "http", Host: "sandbox"}
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
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, http.StatusBadGateway, "RUNTIME_ERROR", "the sandbox's execd is not answering: "+err.Error())
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The agent answers while the request body may still be on its way
		// to it; without full duplex the server would discard the rest of
		// the body as soon as the answer starts, cutting the proxied
		// request (and with it the answer) short.
		http.NewResponseController(w).EnableFullDuplex()
		proxy.ServeHTTP(w, r)
	})
}
