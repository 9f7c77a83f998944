package contract

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/nullcheck"
)

// harness runs osb commands against a local server and checks every
// exchange they cause against specs/ and the upstream files.
type harness struct {
	t        *testing.T
	env      *cmdtest.Env
	rec      *recorder
	ours     map[string]*spec
	upstream map[string]*spec // nil without ../shared/upstream-specs

	mu        sync.Mutex
	endpoints map[string]int               // data-plane base URL → sandbox port, learned from endpoint lookups
	headers   map[string]map[string]string // data-plane base URL → its endpoint headers
}

// covered records, across all tests, which operations of specs/ some
// exchange used; TestMain reports the rest.
var covered = struct {
	sync.Mutex
	ops map[string]bool
}{ops: map[string]bool{}}

func newHarness(t *testing.T, opts ...func(*server.Options)) *harness {
	h := &harness{
		t:         t,
		env:       cmdtest.New(t, opts...),
		rec:       newRecorder(),
		ours:      ourSpecs(t),
		upstream:  upstreamSpecs(t),
		endpoints: map[string]int{},
		headers:   map[string]map[string]string{},
	}
	h.env.ClientOptions = func(o *client.Options) {
		o.HTTPClient = h.rec.Client()
		o.RetryBase = time.Millisecond
	}
	if h.upstream == nil {
		t.Log("../shared/upstream-specs is absent: checking against specs/ only")
	}
	return h
}

// run runs one osb command line, expects its exit code, and checks the
// exchanges it caused.
func (h *harness) run(code int, args ...string) cmdtest.Result {
	h.t.Helper()
	r := h.env.Run(args...).ExpectCode(h.t, code)
	h.checkExchanges(strings.Join(args, " "), false)
	return r
}

// checkExchanges validates what was recorded since the last call; with
// badRequest, requests are known to be invalid and only answers are checked.
func (h *harness) checkExchanges(what string, badRequest bool) {
	h.t.Helper()
	for _, x := range h.rec.take() {
		kind, rest, ok := h.classify(x)
		if !ok {
			h.t.Errorf("osb %s: %s %s went to no known contract", what, x.method, x.url)
			continue
		}
		h.learnEndpoint(kind, rest, x)
		for _, p := range nullsIn(x) {
			h.t.Errorf("osb %s: %s %s answered null at %s: the real server leaves unset fields out", what, x.method, x.url, p)
		}
		if s := h.ours[kind.name]; s != nil {
			for _, p := range s.check(x, rest, badRequest) {
				h.t.Errorf("osb %s: %s", what, p)
			}
			h.cover(s, x, rest)
		} else {
			h.t.Errorf("osb %s: %s %s: specs/%s does not exist", what, x.method, x.url, kind.ours)
		}
		if up := h.upstream[kind.name]; up != nil {
			for _, p := range up.check(x, rest, badRequest) {
				if _, ok := allowed(p); !ok {
					h.t.Errorf("osb %s: upstream %s\n\t(a real-server divergence belongs in the allow-list with its reason)", what, p)
				}
			}
		}
	}
}

var (
	proxyRoute    = regexp.MustCompile(`^/sandboxes/[^/]+/proxy/([0-9]+)(/.*)?$`)
	endpointRoute = regexp.MustCompile(`^/sandboxes/[^/]+/endpoints/([0-9]+)$`)
	diagRoute     = regexp.MustCompile(`^/sandboxes/[^/]+/diagnostics/`)
)

// classify says which contract an exchange belongs to and its path below
// that contract's base.
func (h *harness) classify(x *exchange) (contractKind, string, bool) {
	if rest, ok := strings.CutPrefix(x.url, h.env.Server.URL()); ok {
		if m := proxyRoute.FindStringSubmatch(strings.TrimPrefix(rest, "/v1")); m != nil {
			return portKind(m[1]), m[2], true
		}
		if rest, ok := strings.CutPrefix(rest, "/v1"); ok {
			if diagRoute.MatchString(rest) {
				return diagnostics, rest, true
			}
			return lifecycle, rest, true
		}
		return contractKind{}, "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// The longest matching base wins: /proxy/18080 lives under the execd base.
	var bases []string
	for b := range h.endpoints {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return len(bases[i]) > len(bases[j]) })
	for _, b := range bases {
		if rest, ok := strings.CutPrefix(x.url, b); ok && (rest == "" || rest[0] == '/') {
			return portKind(strconv.Itoa(h.endpoints[b])), rest, true
		}
	}
	return contractKind{}, "", false
}

func portKind(port string) contractKind {
	if port == strconv.Itoa(client.PortEgress) {
		return egress
	}
	return execd
}

// learnEndpoint remembers where an endpoint lookup said a port lives.
func (h *harness) learnEndpoint(kind contractKind, rest string, x *exchange) {
	m := endpointRoute.FindStringSubmatch(rest)
	if kind.name != lifecycle.name || m == nil || x.status != 200 {
		return
	}
	var ep struct {
		Endpoint string            `json:"endpoint"`
		Headers  map[string]string `json:"headers"`
	}
	if json.Unmarshal(x.respBody, &ep) != nil || ep.Endpoint == "" {
		return
	}
	port, _ := strconv.Atoi(m[1])
	h.mu.Lock()
	h.endpoints["http://"+strings.TrimRight(ep.Endpoint, "/")] = port
	h.headers["http://"+strings.TrimRight(ep.Endpoint, "/")] = ep.Headers
	h.mu.Unlock()
}

// endpointOf is a data-plane base learned for port.
func (h *harness) endpointOf(port int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, p := range h.endpoints {
		if p == port {
			return base
		}
	}
	h.t.Fatalf("no endpoint for port %d was looked up", port)
	return ""
}

// headersFor are the endpoint headers learned for the data-plane base of url.
func (h *harness) headersFor(url string) map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, hdr := range h.headers {
		if strings.HasPrefix(url, base+"/") {
			return hdr
		}
	}
	return nil
}

// cover records which operation of our spec an exchange used.
func (h *harness) cover(s *spec, x *exchange, rest string) {
	req, _ := http.NewRequest(x.method, validateHost+s.kind.base+rest, nil)
	if route, _, err := s.router.FindRoute(req); err == nil {
		covered.Lock()
		covered.ops[s.file+" "+x.method+" "+route.Path] = true
		covered.Unlock()
	}
}

// uncovered lists the operations of specs no exchange used.
func uncovered(specs map[string]*spec) []string {
	covered.Lock()
	defer covered.Unlock()
	var out []string
	for _, s := range specs {
		for path, item := range s.doc.Paths.Map() {
			for method := range item.Operations() {
				if !covered.ops[s.file+" "+method+" "+path] {
					out = append(out, s.file+" "+method+" "+path)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// nullsIn lists where a JSON answer, or a frame of a streamed one, holds a
// null (nullcheck.Paths). Generated clients crash on them.
func nullsIn(x *exchange) []string {
	ct := x.respHeader.Get("Content-Type")
	switch {
	case x.respTruncated:
		return nil
	case strings.HasPrefix(ct, "application/json"):
		return nullcheck.Paths(x.respBody)
	case isStream(x.respHeader):
		var out []string
		for i, frame := range splitFrames(x.respBody, x.respComplete) {
			for _, p := range nullcheck.Paths(frame) {
				out = append(out, fmt.Sprintf("frame %d: %s", i, p))
			}
		}
		return out
	}
	return nil
}
