package server

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// fields checks the shape of decoded JSON body fields and collects
// FastAPI/pydantic-style details for everything wrong.
type fields struct{ details []detail }

func (v *fields) add(d detail) { v.details = append(v.details, d) }

func typeErr(loc []any, typ, msg string, input any) detail {
	return detail{Type: typ, Loc: loc, Msg: msg, Input: input}
}

// str reads an optional string field (null counts as absent).
func (v *fields) str(body map[string]any, name string) string {
	switch x := body[name].(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		v.add(typeErr([]any{"body", name}, "string_type", "Input should be a valid string", x))
		return ""
	}
}

func (v *fields) boolean(body map[string]any, name string) bool {
	switch x := body[name].(type) {
	case nil:
		return false
	case bool:
		return x
	default:
		v.add(typeErr([]any{"body", name}, "bool_type", "Input should be a valid boolean", x))
		return false
	}
}

// strMap reads an optional map of strings.
func (v *fields) strMap(body map[string]any, name string) map[string]string {
	return v.strMapAt(body[name], []any{"body", name})
}

func (v *fields) strMapAt(x any, loc []any) map[string]string {
	if x == nil {
		return nil
	}
	m, ok := x.(map[string]any)
	if !ok {
		v.add(typeErr(loc, "dict_type", "Input should be a valid dictionary", x))
		return nil
	}
	out := make(map[string]string, len(m))
	for k, val := range m {
		s, ok := val.(string)
		if !ok {
			v.add(typeErr(append(loc[:len(loc):len(loc)], k), "string_type", "Input should be a valid string", val))
			continue
		}
		out[k] = s
	}
	return out
}

// strList reads an optional list of strings with at least min items.
func (v *fields) strList(body map[string]any, name string, min int) []string {
	x := body[name]
	if x == nil {
		return nil
	}
	loc := []any{"body", name}
	list, ok := x.([]any)
	if !ok {
		v.add(typeErr(loc, "list_type", "Input should be a valid list", x))
		return nil
	}
	if len(list) < min {
		v.add(detail{Type: "too_short", Loc: loc, Input: list,
			Msg: "List should have at least " + strconv.Itoa(min) + " item after validation, not " + strconv.Itoa(len(list)),
			Ctx: map[string]any{"field_type": "List", "min_length": min, "actual_length": len(list)}})
		return nil
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			v.add(typeErr([]any{"body", name, i}, "string_type", "Input should be a valid string", item))
			continue
		}
		out = append(out, s)
	}
	return out
}

// image reads ImageSpec {uri, auth{username,password}} (no other keys) and
// returns the uri. Credentials are accepted and dropped: nothing is pulled.
func (v *fields) image(body map[string]any) string {
	x, present := body["image"]
	if !present {
		return ""
	}
	loc := []any{"body", "image"}
	m, ok := x.(map[string]any)
	if !ok {
		v.add(typeErr(loc, "model_attributes_type", "Input should be a valid dictionary or object to extract fields from", x))
		return ""
	}
	for k, val := range m {
		if k != "uri" && k != "auth" {
			v.add(typeErr([]any{"body", "image", k}, "extra_forbidden", "Extra inputs are not permitted", val))
		}
	}
	if m["auth"] != nil {
		v.strMapAt(m["auth"], []any{"body", "image", "auth"})
	}
	uri, isStr := m["uri"].(string)
	switch {
	case m["uri"] == nil:
		v.add(missing([]any{"body", "image", "uri"}, m))
	case !isStr:
		v.add(typeErr([]any{"body", "image", "uri"}, "string_type", "Input should be a valid string", m["uri"]))
	}
	return uri
}

// timeout reads the optional timeout (integer seconds ≥ min, or null).
func (v *fields) timeout(body map[string]any, min time.Duration) *time.Duration {
	x := body["timeout"]
	if x == nil {
		return nil
	}
	loc := []any{"body", "timeout"}
	secs, ok := toInt(x)
	if !ok {
		v.add(typeErr(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", x))
		return nil
	}
	minSecs := int64(math.Max(1, math.Ceil(min.Seconds())))
	if secs < minSecs {
		v.add(detail{Type: "greater_than_equal", Loc: loc, Input: x,
			Msg: "Input should be greater than or equal to " + strconv.FormatInt(minSecs, 10),
			Ctx: map[string]any{"ge": minSecs}})
		return nil
	}
	d := time.Duration(secs) * time.Second
	return &d
}

// toInt accepts what pydantic's lax int mode does: integers, integral
// floats and strings of digits.
func toInt(x any) (int64, bool) {
	switch n := x.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		if f, err := n.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64); err == nil {
			return i, true
		}
	}
	return 0, false
}

// platform reads PlatformSpec {os: linux|windows, arch: amd64|arm64}.
func (v *fields) platform(body map[string]any) json.RawMessage {
	x := body["platform"]
	if x == nil {
		return nil
	}
	m, ok := x.(map[string]any)
	if !ok {
		v.add(typeErr([]any{"body", "platform"}, "model_attributes_type", "Input should be a valid dictionary or object to extract fields from", x))
		return nil
	}
	bad := len(v.details)
	v.enum(m, "os", []string{"linux", "windows"})
	v.enum(m, "arch", []string{"amd64", "arm64"})
	if len(v.details) > bad {
		return nil
	}
	raw, _ := json.Marshal(map[string]any{"os": m["os"], "arch": m["arch"]})
	return raw
}

func (v *fields) enum(m map[string]any, name string, allowed []string) {
	loc := []any{"body", "platform", name}
	x, present := m[name]
	if !present {
		v.add(missing(loc, m))
		return
	}
	for _, a := range allowed {
		if x == a {
			return
		}
	}
	v.add(detail{Type: "enum", Loc: loc, Input: x,
		Msg: "Input should be '" + strings.Join(allowed, "' or '") + "'",
		Ctx: map[string]any{"expected": "'" + strings.Join(allowed, "' or '") + "'"}})
}
