package contract

import (
	"fmt"
	"sort"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// specs/ may describe only what the upstream files describe too: a route,
// status, parameter or field found only in specs/ is drift, unless the
// allow-list names it with the reason real servers have it anyway.
func TestSpecsDoNotDrift(t *testing.T) {
	t.Parallel()
	up := upstreamSpecs(t)
	if up == nil {
		t.Skip("../shared/upstream-specs is absent")
	}
	for name, ours := range ourSpecs(t) {
		for _, p := range drift(ours, up[name]) {
			if _, ok := allowed(p); !ok {
				t.Errorf("%s\n\t(fix specs/%s, or allow-list it with the reason real servers do it)", p, ours.kind.ours)
			}
		}
	}
}

// Every allow-list entry names a part the tests produce and gives a reason.
func TestAllowListEntriesAreComplete(t *testing.T) {
	t.Parallel()
	parts := map[string]bool{"route": true, "request": true, "response": true, "stream": true,
		"drift-route": true, "drift-status": true, "drift-field": true, "drift-param": true}
	for i, d := range divergences {
		if !parts[d.part] || d.reason == "" || (d.spec == "" && d.route == "" && d.match == "") {
			t.Errorf("allow-list entry %d (%+v) needs a known part, a reason, and something narrower than everything", i, d)
		}
	}
}

func drift(ours, up *spec) []problem {
	upOps := map[string]*openapi3.Operation{}
	upParams := map[string]openapi3.Parameters{}
	for path, item := range up.doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + normRoute(path)
			upOps[key] = op
			upParams[key] = append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...)
		}
	}
	var out []problem
	for path, item := range ours.doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + normRoute(path)
			at := func(part string, status int, format string, args ...any) {
				out = append(out, problem{spec: up.file, method: method, route: path, status: status, part: part, text: fmt.Sprintf(format, args...)})
			}
			upOp := upOps[key]
			if upOp == nil {
				at("drift-route", 0, "route not in %s", up.file)
				continue
			}
			for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				if p.Value != nil && !hasParam(upParams[key], p.Value) {
					at("drift-param", 0, "%s parameter %q not in %s", p.Value.In, p.Value.Name, up.file)
				}
			}
			for code, resp := range op.Responses.Map() {
				upResp := upOp.Responses.Value(code)
				if upResp == nil {
					upResp = upOp.Responses.Default()
				}
				status := atoi(code)
				if upResp == nil {
					at("drift-status", status, "status %s not in %s", code, up.file)
					continue
				}
				for _, f := range missingFields(ours.bodySchema(jsonSchema(resp.Value)), jsonSchema(upResp.Value)) {
					at("drift-field", status, "response field %s not in %s", f, up.file)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				var upBody *openapi3.SchemaRef
				if upOp.RequestBody != nil && upOp.RequestBody.Value != nil {
					upBody = mediaSchema(upOp.RequestBody.Value.Content)
				}
				for _, f := range missingFields(mediaSchema(op.RequestBody.Value.Content), upBody) {
					at("drift-field", 0, "request field %s not in %s", f, up.file)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// bodySchema is what a body holds: for a stream described frame by frame
// (x-osb-events, x-osb-lines), the schema of one frame.
func (s *spec) bodySchema(body *openapi3.SchemaRef) *openapi3.SchemaRef {
	if body == nil || body.Value == nil {
		return body
	}
	for _, ext := range []string{"x-osb-events", "x-osb-lines"} {
		if name, ok := body.Value.Extensions[ext].(string); ok {
			return s.doc.Components.Schemas[name]
		}
	}
	return body
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

func hasParam(ps openapi3.Parameters, p *openapi3.Parameter) bool {
	for _, q := range ps {
		if q.Value != nil && q.Value.In == p.In && q.Value.Name == p.Name {
			return true
		}
	}
	return false
}

func jsonSchema(r *openapi3.Response) *openapi3.SchemaRef {
	if r == nil {
		return nil
	}
	return mediaSchema(r.Content)
}

// mediaSchema is the schema of a JSON body (or of whatever single body
// there is: streams, text).
func mediaSchema(c openapi3.Content) *openapi3.SchemaRef {
	if mt := c.Get("application/json"); mt != nil {
		return mt.Schema
	}
	for _, mt := range c {
		return mt.Schema
	}
	return nil
}

// missingFields lists the field paths of ours that up lacks.
func missingFields(ours, up *openapi3.SchemaRef) []string {
	have := map[string]bool{}
	fieldPaths(up, "", have, 0)
	want := map[string]bool{}
	fieldPaths(ours, "", want, 0)
	var out []string
	for f := range want {
		if !have[f] {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// fieldPaths collects a.b.c style paths of every property reachable in s.
// Alternatives (allOf, anyOf, oneOf) contribute all their properties.
func fieldPaths(s *openapi3.SchemaRef, prefix string, into map[string]bool, depth int) {
	if s == nil || s.Value == nil || depth > 10 {
		return
	}
	v := s.Value
	for name, p := range v.Properties {
		into[prefix+name] = true
		fieldPaths(p, prefix+name+".", into, depth+1)
	}
	if v.Items != nil {
		fieldPaths(v.Items, prefix+"[].", into, depth+1)
	}
	if v.AdditionalProperties.Schema != nil {
		fieldPaths(v.AdditionalProperties.Schema, prefix+"*.", into, depth+1)
	}
	for _, group := range []openapi3.SchemaRefs{v.AllOf, v.AnyOf, v.OneOf} {
		for _, alt := range group {
			fieldPaths(alt, prefix, into, depth+1)
		}
	}
}
