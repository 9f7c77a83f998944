package client

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// address is a parsed base URL: where requests go, which origin its
// credentials belong to, and how it may be shown.
type address struct {
	base    string // scheme://[user@]host[:port][/path], no trailing slash
	display string // base with any password masked: the only form errors show
	origin  string // scheme://host:port, what credentials are bound to
	scheme  string
}

// CheckDomain reports what is wrong with a domain setting (host[:port][/path],
// with or without an http or https scheme), as New would.
func CheckDomain(raw string) error {
	_, err := parseAddress("http", raw)
	return err
}

// parseAddress reads a domain as configured (host[:port][/path], or the same
// with an http or https scheme) or an endpoint as a server handed it out. A
// value a request URL cannot be built from, like one holding a query or a
// fragment (the API path would end up inside it), is refused here, before
// any request.
func parseAddress(proto, raw string) (address, error) {
	if raw == "" {
		return address{}, fmt.Errorf("the address is empty")
	}
	if i := strings.IndexFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return address{}, fmt.Errorf("%q contains a space or a control character", redactRaw(raw))
	}
	if strings.ContainsAny(raw, "?#") {
		return address{}, fmt.Errorf("%q contains '?' or '#': give host[:port][/path] without a query or fragment", redactRaw(raw))
	}
	withScheme := raw
	if scheme, _, ok := strings.Cut(raw, "://"); ok {
		if s := strings.ToLower(scheme); s != "http" && s != "https" {
			return address{}, fmt.Errorf("%q has the scheme %q: use http or https", redactRaw(raw), scheme)
		}
	} else {
		withScheme = proto + "://" + raw
	}
	u, err := url.Parse(strings.TrimRight(withScheme, "/"))
	if err != nil {
		return address{}, fmt.Errorf("%q is not a valid address", redactRaw(raw))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Hostname() == "" {
		return address{}, fmt.Errorf("%q has no host name", redactRaw(raw))
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	} else if n, perr := strconv.Atoi(port); perr != nil || n < 1 || n > 65535 {
		return address{}, fmt.Errorf("%q has the port %q: use a number from 1 to 65535", redactRaw(raw), port)
	}
	return address{
		base:    u.String(),
		display: u.Redacted(),
		origin:  u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port,
		scheme:  u.Scheme,
	}, nil
}

// redactRaw masks the password of an address that may not parse.
func redactRaw(raw string) string {
	rest := raw
	prefix := ""
	if i := strings.Index(raw, "://"); i >= 0 {
		prefix, rest = raw[:i+3], raw[i+3:]
	}
	at := strings.LastIndex(rest[:pathStart(rest)], "@")
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return raw
	}
	return prefix + user + ":xxxxx" + rest[at:]
}

func pathStart(s string) int {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return i
	}
	return len(s)
}

// originOf is the origin of a request URL, in the form address.origin has.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
