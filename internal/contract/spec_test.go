package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The four contracts osb speaks. Each has a file in specs/ and, upstream, a
// file of its own; base is the path prefix its routes live under on the wire.
type contractKind struct {
	name     string
	ours     string // in specs/
	upstream string // in ../shared/upstream-specs/
	base     string
}

var (
	lifecycle   = contractKind{"lifecycle", "lifecycle.yaml", "sandbox-lifecycle.yml", "/v1"}
	diagnostics = contractKind{"diagnostics", "diagnostics.yaml", "diagnostic-api.yml", "/v1"}
	execd       = contractKind{"execd", "execd.yaml", "execd-api.yaml", ""}
	egress      = contractKind{"egress", "egress.yaml", "egress-api.yaml", ""}
	allKinds    = []contractKind{lifecycle, diagnostics, execd, egress}
)

const (
	repoRoot     = "../.."
	upstreamDir  = "../../../shared/upstream-specs"
	validateHost = "http://contract.invalid"
)

func init() {
	// Streams and plain text are checked frame by frame below (see
	// checkFrames); to the validator they are just strings.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
}

// spec is one loaded OpenAPI file with a router over its routes.
type spec struct {
	kind   contractKind
	file   string
	doc    *openapi3.T
	router routers.Router
}

func readSpec(kind contractKind, path string) (*spec, error) {
	doc, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("%s is not a valid OpenAPI document: %w", path, err)
	}
	// Route on paths alone: the host and base path of a recorded exchange
	// are rewritten to this one server.
	doc.Servers = openapi3.Servers{{URL: validateHost + kind.base}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &spec{kind: kind, file: filepath.Base(path), doc: doc, router: router}, nil
}

// loaded holds the specs, read once for every test of the run: loading and
// validating them is most of a traffic test's own work. Tests only read
// them.
var loaded struct {
	once     sync.Once
	ours     map[string]*spec
	upstream map[string]*spec
	err      error
}

func loadSpecs() {
	loaded.once.Do(func() {
		loaded.ours, loaded.err = readOurSpecs()
		if loaded.err == nil {
			loaded.upstream, loaded.err = readUpstreamSpecs()
		}
	})
}

// ourSpecs gives specs/*.yaml for the contracts that have a file there.
func ourSpecs(t testing.TB) map[string]*spec {
	t.Helper()
	loadSpecs()
	if loaded.err != nil {
		t.Fatal(loaded.err)
	}
	return loaded.ours
}

func readOurSpecs() (map[string]*spec, error) {
	out := map[string]*spec{}
	for _, k := range allKinds {
		path := filepath.Join(repoRoot, "specs", k.ours)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		s, err := readSpec(k, path)
		if err != nil {
			return nil, err
		}
		out[k.name] = s
	}
	return out, nil
}

// upstreamSpecs gives the upstream files, or nil when the folder is not
// there (a checkout without the shared reference data).
func upstreamSpecs(t testing.TB) map[string]*spec {
	t.Helper()
	loadSpecs()
	if loaded.err != nil {
		t.Fatal(loaded.err)
	}
	return loaded.upstream
}

func readUpstreamSpecs() (map[string]*spec, error) {
	if _, err := os.Stat(upstreamDir); err != nil {
		return nil, nil
	}
	out := map[string]*spec{}
	for _, k := range allKinds {
		s, err := readSpec(k, filepath.Join(upstreamDir, k.upstream))
		if err != nil {
			return nil, err
		}
		out[k.name] = s
	}
	return out, nil
}

// problem is one way an exchange broke a contract.
type problem struct {
	spec   string // file name
	method string
	route  string // the spec's path template, or the wire path when unknown
	status int
	part   string // "route", "request", "response" or "stream"
	text   string
}

func (p problem) String() string {
	status := ""
	if p.status != 0 {
		status = fmt.Sprintf(" → %d", p.status)
	}
	return fmt.Sprintf("%s: %s %s%s: %s: %s", p.spec, p.method, p.route, status, p.part, oneLine(p.text))
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

// check validates one exchange, whose path (below the contract's base) is
// rest, against s. A request sent invalid on purpose (badRequest) only has
// its response checked.
func (s *spec) check(x *exchange, rest string, badRequest bool) []problem {
	req, err := http.NewRequest(x.method, validateHost+s.kind.base+rest, bytes.NewReader(x.reqBody))
	if err != nil {
		return []problem{{spec: s.file, method: x.method, route: rest, part: "route", text: err.Error()}}
	}
	req.URL.RawQuery = x.query
	req.Header = x.reqHeader.Clone()
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		return []problem{{spec: s.file, method: x.method, route: rest, status: x.status, part: "route", text: "not in the spec: " + err.Error()}}
	}
	at := func(part, text string) problem {
		return problem{spec: s.file, method: x.method, route: route.Path, status: x.status, part: part, text: text}
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	var out []problem
	if x.reqTruncated {
		opts.ExcludeRequestBody = true
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && !badRequest {
		out = append(out, at("request", err.Error()))
	}
	if x.status == 0 {
		return out // no response: a transport failure the test provoked
	}
	resp := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 x.status,
		Header:                 x.respHeader,
		Body:                   io.NopCloser(bytes.NewReader(x.respBody)),
		// A stream is checked frame by frame instead (checkFrames).
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: x.respTruncated || isStream(x.respHeader)},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), resp); err != nil {
		out = append(out, at("response", err.Error()))
	}
	for _, text := range s.checkFrames(route, x) {
		out = append(out, at("stream", text))
	}
	return out
}

// checkFrames validates each frame of a streamed response. A frame's
// schema is the one the operation names in x-osb-events or x-osb-lines
// (specs/), or, when the body schema is an object (as upstream files write
// event streams), the body schema itself. Only whole frames are checked: a
// client may hang up mid-stream.
func (s *spec) checkFrames(route *routers.Route, x *exchange) []string {
	r := route.Operation.Responses.Status(x.status)
	if r == nil || r.Value == nil || !isStream(x.respHeader) {
		return nil
	}
	var problems []string
	for ct, mt := range r.Value.Content {
		if !strings.HasPrefix(x.respHeader.Get("Content-Type"), ct) {
			continue
		}
		schema := s.frameSchema(mt)
		if schema == nil {
			continue
		}
		for i, frame := range splitFrames(x.respBody, x.respComplete) {
			var v any
			if err := json.Unmarshal(frame, &v); err != nil {
				problems = append(problems, fmt.Sprintf("frame %d is not JSON: %q", i, frame))
				continue
			}
			if err := schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
				problems = append(problems, fmt.Sprintf("frame %d %s: %v", i, frame, err))
			}
		}
	}
	return problems
}

// isStream reports whether a response body is a stream of frames.
func isStream(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "text/event-stream")
}

func (s *spec) frameSchema(mt *openapi3.MediaType) *openapi3.SchemaRef {
	if mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	for _, ext := range []string{"x-osb-events", "x-osb-lines"} {
		if name, ok := mt.Schema.Value.Extensions[ext].(string); ok {
			if ref := s.doc.Components.Schemas[name]; ref != nil {
				return ref
			}
			return &openapi3.SchemaRef{Value: &openapi3.Schema{Not: &openapi3.SchemaRef{Value: &openapi3.Schema{}}}}
		}
	}
	if mt.Schema.Value.Type.Is("object") {
		return mt.Schema
	}
	return nil
}

// splitFrames cuts a stream into the JSON payload of each frame, in any
// framing real servers use: a line that starts with "{" is a whole frame
// (execd's bare JSON events, and the one-object-per-line metrics stream);
// "data:" lines make one frame up to a blank line; comments and other
// fields are skipped. When the body was cut off, its last line is dropped.
func splitFrames(body []byte, complete bool) [][]byte {
	lines := bytes.Split(body, []byte("\n"))
	if !complete {
		lines = lines[:len(lines)-1]
	}
	var out [][]byte
	var data []byte
	for _, line := range lines {
		line = bytes.TrimRight(line, "\r")
		switch {
		case len(bytes.TrimSpace(line)) == 0:
			if len(data) > 0 {
				out, data = append(out, data), nil
			}
		case line[0] == '{':
			out = append(out, bytes.Clone(line))
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
	}
	if len(data) > 0 && complete {
		out = append(out, data)
	}
	return out
}
