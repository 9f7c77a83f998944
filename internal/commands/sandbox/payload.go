package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// jsonType names the kind of a decoded JSON value for messages.
func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// fieldError is a problem at a path inside a JSON value ("egress.0.target").
type fieldError struct {
	loc []string
	msg string
}

func (e *fieldError) Error() string {
	if len(e.loc) == 0 {
		return e.msg
	}
	return strings.Join(e.loc, ".") + ": " + e.msg
}

func errAt(msg string, loc ...string) error { return &fieldError{loc: loc, msg: msg} }

// within prefixes the location of a fieldError.
func within(err error, loc ...string) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return &fieldError{loc: append(append([]string{}, loc...), fe.loc...), msg: fe.msg}
	}
	return err
}

// camelKeys rewrites snake_case object keys as camelCase, at every depth:
// the SDK models accept both spellings, the wire takes camelCase.
func camelKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[camel(k)] = camelKeys(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = camelKeys(e)
		}
		return out
	}
	return v
}

func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if p := parts[i]; p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// checkNetworkPolicy validates a NetworkPolicy {defaultAction?, egress?[]}
// and returns it in wire form.
func checkNetworkPolicy(v any) (any, error) {
	v = camelKeys(v)
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errAt("must be a JSON object, got " + jsonType(v))
	}
	if a, ok := obj["defaultAction"]; ok && a != nil {
		if err := checkAction(a); err != nil {
			return nil, within(err, "defaultAction")
		}
	}
	rules, ok := obj["egress"]
	if !ok || rules == nil {
		return obj, nil
	}
	list, ok := rules.([]any)
	if !ok {
		return nil, errAt("must be an array of rules", "egress")
	}
	for i, r := range list {
		if err := checkRule(r); err != nil {
			return nil, within(err, "egress", strconv.Itoa(i))
		}
	}
	return obj, nil
}

func checkAction(v any) error {
	if s, _ := v.(string); s == "allow" || s == "deny" {
		return nil
	}
	return errAt(`must be "allow" or "deny"`)
}

func checkRule(v any) error {
	rule, ok := v.(map[string]any)
	if !ok {
		return errAt("must be an object with action and target")
	}
	a, ok := rule["action"]
	if !ok {
		return errAt("field required", "action")
	}
	if err := checkAction(a); err != nil {
		return within(err, "action")
	}
	return requireString(rule, "target")
}

// requireString checks that obj[key] is a non-empty string.
func requireString(obj map[string]any, key string) error {
	v, ok := obj[key]
	if !ok || v == nil {
		return errAt("field required", key)
	}
	if s, ok := v.(string); !ok || s == "" {
		return errAt("must be a non-empty string", key)
	}
	return nil
}

// volumeBackends are the storage kinds a Volume names exactly one of, with
// the fields each requires.
var volumeBackends = []struct {
	name     string
	required []string
}{
	{"host", []string{"path"}},
	{"pvc", []string{"claimName"}},
	{"ossfs", []string{"bucket", "endpoint", "accessKeyId", "accessKeySecret"}},
}

// checkVolumes validates an array of Volume objects and returns it in wire form.
func checkVolumes(v any) (any, error) {
	v = camelKeys(v)
	list, ok := v.([]any)
	if !ok {
		return nil, errAt("must be a JSON array, got " + jsonType(v))
	}
	for i, item := range list {
		if err := checkVolume(item); err != nil {
			return nil, within(err, strconv.Itoa(i))
		}
	}
	return list, nil
}

func checkVolume(v any) error {
	vol, ok := v.(map[string]any)
	if !ok {
		return errAt("must be a Volume object, got " + jsonType(v))
	}
	for _, key := range []string{"name", "mountPath"} {
		if err := requireString(vol, key); err != nil {
			return err
		}
	}
	if !strings.HasPrefix(vol["mountPath"].(string), "/") {
		return errAt("must be an absolute path", "mountPath")
	}
	if ro, ok := vol["readOnly"]; ok && ro != nil {
		if _, ok := ro.(bool); !ok {
			return errAt("must be a boolean", "readOnly")
		}
	}
	var found []string
	for _, b := range volumeBackends {
		spec, ok := vol[b.name]
		if !ok || spec == nil {
			continue
		}
		found = append(found, b.name)
		obj, ok := spec.(map[string]any)
		if !ok {
			return errAt("must be an object", b.name)
		}
		for _, key := range b.required {
			if err := requireString(obj, key); err != nil {
				return within(err, b.name)
			}
		}
	}
	if len(found) != 1 {
		return errAt(fmt.Sprintf("exactly one of host, pvc, ossfs must be set (got %d)", len(found)))
	}
	return nil
}
