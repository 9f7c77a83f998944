package server

import "net/http"

// reportMetricsEvent takes the creation-latency report that every official
// SDK posts after a create (POST /metrics/events). The real server records
// it (a no-op when telemetry export is off) and answers 204 with no body;
// this one writes it to the log. A body that breaks the MetricsEvent schema
// gets FastAPI's 422, as every other lifecycle body does.
func (s *Server) reportMetricsEvent(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	var v fields
	if x, present := body["eventType"]; !present {
		v.add(missing([]any{"body", "eventType"}, body))
	} else if x != "sandbox.create" {
		v.add(detail{Type: "enum", Loc: []any{"body", "eventType"}, Msg: "Input should be 'sandbox.create'",
			Input: x, Ctx: map[string]any{"expected": "'sandbox.create'"}})
	}
	ms := v.nonNegative(body, "createDurationMs")
	success, isBool := body["success"].(bool)
	if x, present := body["success"]; !present {
		v.add(missing([]any{"body", "success"}, body))
	} else if !isBool {
		v.add(typeErr([]any{"body", "success"}, "bool_type", "Input should be a valid boolean", x))
	}
	sandboxID, image := v.str(body, "sandboxId"), v.str(body, "image")
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return
	}
	s.log.event("sdk metrics: sandbox.create %s in %dms, success %v, sandbox %q, image %q",
		r.UserAgent(), ms, success, sandboxID, image)
	w.WriteHeader(http.StatusNoContent)
}

// nonNegative reads a required integer ≥ 0.
func (v *fields) nonNegative(body map[string]any, name string) int64 {
	loc := []any{"body", name}
	x, present := body[name]
	if !present {
		v.add(missing(loc, body))
		return 0
	}
	n, ok := toInt(x)
	switch {
	case !ok:
		v.add(typeErr(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", x))
	case n < 0:
		v.add(detail{Type: "greater_than_equal", Loc: loc, Input: x,
			Msg: "Input should be greater than or equal to 0", Ctx: map[string]any{"ge": 0}})
	}
	return n
}
