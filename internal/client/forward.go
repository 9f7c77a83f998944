package client

import (
	"maps"
	"net/url"
)

// ForwardTarget is where a port forwarder sends what it receives: the data
// plane's base URL (scheme, host and any path prefix of the endpoint) and
// the headers every request must carry (the endpoint's, and the API key
// only when the endpoint is the server's own proxy).
func (d *DataPlane) ForwardTarget() (*url.URL, map[string]string, error) {
	u, err := url.Parse(d.t.addr.base)
	if err != nil {
		return nil, nil, err
	}
	return u, maps.Clone(d.t.headers), nil
}
