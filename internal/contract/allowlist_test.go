package contract

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// divergence is one known, accepted difference between the upstream OpenAPI
// files and what real servers (and so osb and `osb server`) do. Every entry
// says why it is accepted. It matches problems found when validating traffic
// against the upstream files, and the drift test's findings.
type divergence struct {
	spec   string // upstream file; "" for any
	method string // "" for any
	route  string // path template ({param} names ignored); "" for any
	status int    // the response status; 0 for any
	part   string // route, request, response, stream, drift-route, drift-status, drift-field, drift-param
	match  string // a substring of the problem's text; "" for any
	reason string
}

// divergences is THE allow-list. Keep entries narrow: one behaviour each.
var divergences = []divergence{
	// Routes real servers serve that the upstream lifecycle file does not
	// describe (contracts.md §1.11).
	{spec: "sandbox-lifecycle.yml", route: "/health", part: "drift-route",
		reason: "the real server answers GET /health with {status} without a key; the spec omits it"},
	{spec: "sandbox-lifecycle.yml", route: "/version", part: "drift-route",
		reason: "the real server answers GET /version with {version} without a key; the spec omits it"},
	{spec: "sandbox-lifecycle.yml", route: "/health", part: "route",
		reason: "GET /health exists on real servers but not in the spec"},
	{spec: "sandbox-lifecycle.yml", route: "/version", part: "route",
		reason: "GET /version exists on real servers but not in the spec"},
	{spec: "sandbox-lifecycle.yml", route: "/templates", part: "drift-route",
		reason: "templates (fast-sandbox golden images) are served by the real server but absent from its spec"},
	{spec: "sandbox-lifecycle.yml", route: "/templates/{}", part: "drift-route",
		reason: "templates are served by the real server but absent from its spec"},
	{spec: "sandbox-lifecycle.yml", route: "/templates", part: "route",
		reason: "templates are served by the real server but absent from its spec"},
	{spec: "sandbox-lifecycle.yml", route: "/templates/{}", part: "route",
		reason: "templates are served by the real server but absent from its spec"},
	{spec: "sandbox-lifecycle.yml", part: "drift-field", match: "templateId",
		reason: "create from a template sends templateId; the real server accepts it, its spec lacks it"},

	{spec: "sandbox-lifecycle.yml", route: "/sandboxes/{}/networkpolicy", part: "drift-route",
		reason: "the real server serves the control-plane egress policy (used for template sandboxes); its spec omits it (contracts.md §1.11)"},
	{spec: "sandbox-lifecycle.yml", route: "/sandboxes/{}/networkpolicy", part: "route",
		reason: "the real server serves the control-plane egress policy; its spec omits it (contracts.md §1.11)"},

	// The egress sidecar takes a whole policy too: for an ordinary sandbox
	// the lifecycle server's PUT /networkpolicy passes its body to the
	// sidecar's /policy (contracts.md §1.11).
	{spec: "egress-api.yaml", method: "PUT", route: "/policy", part: "drift-route",
		reason: "PUT /networkpolicy on the lifecycle server replaces the policy through the sidecar's /policy; the spec lists only GET, PATCH, DELETE"},
	{spec: "egress-api.yaml", method: "PUT", route: "/policy", part: "route",
		reason: "PUT /networkpolicy on the lifecycle server replaces the policy through the sidecar's /policy; the spec lists only GET, PATCH, DELETE"},
	{spec: "egress-api.yaml", method: "POST", route: "/policy", part: "drift-route",
		reason: "the real sidecar replaces the policy on POST as on PUT (components/egress policy_server.go); the spec lists only GET, PATCH, DELETE"},
	{spec: "egress-api.yaml", method: "POST", route: "/policy", part: "route",
		reason: "the real sidecar replaces the policy on POST as on PUT (components/egress policy_server.go); the spec lists only GET, PATCH, DELETE"},
	{spec: "egress-api.yaml", method: "GET", route: "/healthz", part: "drift-route",
		reason: "the real sidecar serves GET /healthz (components/egress policy_server.go); the spec omits it"},
	{spec: "egress-api.yaml", method: "GET", route: "/healthz", part: "route",
		reason: "the real sidecar serves GET /healthz (components/egress policy_server.go); the spec omits it"},

	// The diagnostics routes without a scope are the older plain-text API,
	// still served (with Deprecation: true) and used by `osb devops`
	// (contracts.md §3.2).
	{spec: "diagnostic-api.yml", route: "/sandboxes/{}/diagnostics/inspect", part: "drift-route",
		reason: "older plain-text diagnostics route, still served by the real server; not in its spec"},
	{spec: "diagnostic-api.yml", route: "/sandboxes/{}/diagnostics/summary", part: "drift-route",
		reason: "older plain-text diagnostics route, still served by the real server; not in its spec"},
	{spec: "diagnostic-api.yml", route: "/sandboxes/{}/diagnostics/inspect", part: "route",
		reason: "older plain-text diagnostics route, still served by the real server; not in its spec"},
	{spec: "diagnostic-api.yml", route: "/sandboxes/{}/diagnostics/summary", part: "route",
		reason: "older plain-text diagnostics route, still served by the real server; not in its spec"},
	{spec: "diagnostic-api.yml", part: "drift-param", match: `"tail"`,
		reason: "the unscoped (older) logs route takes tail; the spec describes only the scoped API"},
	{spec: "diagnostic-api.yml", part: "drift-param", match: `"since"`,
		reason: "the unscoped (older) logs route takes since; the spec describes only the scoped API"},
	{spec: "diagnostic-api.yml", part: "drift-param", match: `"limit"`,
		reason: "the unscoped (older) events route takes limit; the spec describes only the scoped API"},
	{spec: "diagnostic-api.yml", part: "drift-status", match: "422",
		reason: "FastAPI answers 422 {detail:[...]} for a tail or limit out of range on the older routes"},
	{spec: "diagnostic-api.yml", part: "request", match: `parameter "scope"`,
		reason: "without scope the real server answers the older plain-text diagnostics (contracts.md §3.2)"},

	// execd: frames and statuses the spec does not describe.
	{spec: "execd-api.yaml", route: "/metrics/watch", part: "drift-field", match: "error",
		reason: "a failed sample is written as a line {\"error\": ...} and the stream goes on (contracts.md §2.7)"},
	{spec: "execd-api.yaml", route: "/session/{}/run", part: "drift-field", match: "field code",
		reason: "a session run that times out ends its stream with a bare {code, message} object"},
	{spec: "execd-api.yaml", route: "/session/{}/run", part: "drift-field", match: "field message",
		reason: "a session run that times out ends its stream with a bare {code, message} object"},
	{spec: "execd-api.yaml", part: "drift-field", match: "text_base64",
		reason: "local server only: output chunks that are not UTF-8 also carry their exact bytes; other clients ignore the field"},
	{spec: "execd-api.yaml", method: "DELETE", route: "/files", status: 400, part: "drift-status",
		reason: "local server only: a path that leaves the sandbox filesystem, or a directory, is refused with 400 INVALID_FILE (execd answers 500 for a directory)"},
	{spec: "execd-api.yaml", method: "DELETE", route: "/directories", status: 400, part: "drift-status",
		reason: "local server only: a path that leaves the sandbox filesystem, or a mount point, is refused with 400 INVALID_FILE"},
	{spec: "execd-api.yaml", method: "POST", route: "/files/replace", status: 404, part: "drift-status",
		reason: "execd answers a replace in a missing file with 404 FILE_NOT_FOUND (execd-observed.md §3.9); the spec lists no 404"},
	{spec: "execd-api.yaml", method: "POST", route: "/files/permissions", status: 404, part: "drift-status",
		reason: "local server only: a missing file is 404 FILE_NOT_FOUND, a client mistake, where execd answers 500 after changing the paths before it"},
	{spec: "execd-api.yaml", method: "POST", route: "/files/mv", status: 409, part: "drift-status",
		reason: "local server only: an existing destination is 409, a client mistake, where execd answers 500"},
	{spec: "execd-api.yaml", method: "GET", route: "/files/info", status: 400, part: "drift-status",
		reason: "local server only: a path that leaves the sandbox filesystem is refused with 400 INVALID_FILE"},

	// FastAPI answers a request that does not fit its model with 422
	// {"detail": [...]} before any handler runs; the spec never lists 422.
	{spec: "sandbox-lifecycle.yml", part: "drift-status", match: "422",
		reason: "FastAPI request validation answers 422 {detail:[...]} (timeout < 60, pageSize > 200, bad types)"},
	{spec: "sandbox-lifecycle.yml", status: 422, part: "response", match: "status is not supported",
		reason: "FastAPI request validation answers 422 {detail:[...]}"},

	// Statuses real servers send that the spec leaves out.
	{spec: "sandbox-lifecycle.yml", method: "POST", route: "/sandboxes", part: "drift-status", match: "404",
		reason: "create from an unknown snapshot (or template) id answers 404 on real servers"},
	{spec: "sandbox-lifecycle.yml", method: "POST", route: "/sandboxes", part: "drift-status", match: "503",
		reason: "a server that is shutting down, or a tenant provider that is down, answers 503"},

	// execd started with an access token checks it before routing, on every
	// route, and answers 401 {"error": "..."} (contracts.md §2.1, Q13).
	{spec: "execd-api.yaml", status: 401, part: "drift-status",
		reason: "execd with --access-token answers 401 {error} on every route; the spec lists no 401"},
	{spec: "execd-api.yaml", status: 401, part: "response", match: "status is not supported",
		reason: "execd with --access-token answers 401 {error} on every route; the spec lists no 401"},

	// How streams and file parts look on the wire, which the upstream file
	// describes another way.
	{spec: "execd-api.yaml", route: "/files/upload", part: "request", match: `at '/metadata': got object, want string`,
		reason: "the metadata part must be a JSON file part or execd does not see it (contracts.md §2.6, Q24); the spec types it as a string"},
	{spec: "execd-api.yaml", method: "POST", route: "/files/replace", status: 200, part: "response", match: `Content-Type has unexpected value: ""`,
		reason: "execd answers a replace with an empty body unless ?verbose=true (contracts.md §2.2)"},
	{spec: "execd-api.yaml", part: "request", match: "Value is not nullable",
		reason: "clients send null for an unset owner or group, as the official SDK does; execd reads null as unset (contracts.md §2.6)"},
	{spec: "diagnostic-api.yml", status: 200, part: "response", match: `Content-Type has unexpected value: "text/plain`,
		reason: "without scope the older routes answer text/plain with Deprecation: true (contracts.md §3.2)"},
}

var paramName = regexp.MustCompile(`\{[^}]*\}`)

// normRoute drops path parameter names, which differ between files.
func normRoute(r string) string { return paramName.ReplaceAllString(r, "{}") }

// routeMatches compares a divergence's route with a problem's, which is a
// path template, or the path on the wire when no route of the spec matched.
func routeMatches(allowed, got string) bool {
	if normRoute(allowed) == normRoute(got) {
		return true
	}
	re := "^" + strings.ReplaceAll(regexp.QuoteMeta(normRoute(allowed)), regexp.QuoteMeta("{}"), "[^/]+") + "$"
	return regexp.MustCompile(re).MatchString(got)
}

func (d divergence) allows(p problem) bool {
	return (d.spec == "" || d.spec == p.spec) &&
		(d.method == "" || d.method == p.method) &&
		(d.route == "" || routeMatches(d.route, p.route)) &&
		(d.status == 0 || d.status == p.status) &&
		d.part == p.part &&
		strings.Contains(p.text, d.match)
}

// allowUsed counts, per entry, the problems it accepted in this run.
var allowUsed = struct {
	sync.Mutex
	n map[int]int
}{n: map[int]int{}}

// allowed returns the divergence that accepts p, if any.
func allowed(p problem) (divergence, bool) {
	for i, d := range divergences {
		if d.allows(p) {
			allowUsed.Lock()
			allowUsed.n[i]++
			allowUsed.Unlock()
			return d, true
		}
	}
	return divergence{}, false
}

// unusedDivergences lists the entries no problem needed in this run.
func unusedDivergences() []string {
	allowUsed.Lock()
	defer allowUsed.Unlock()
	var out []string
	for i, d := range divergences {
		if allowUsed.n[i] == 0 {
			out = append(out, fmt.Sprintf("%d: %s %s %s %s %q (%s)", i, d.spec, d.method, d.route, d.part, d.match, d.reason))
		}
	}
	return out
}
