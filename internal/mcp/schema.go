package mcp

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/osb-dev/osb/internal/client"
)

// inputSchema is the input schema of a tool that takes In, derived from
// its fields (their `jsonschema` tags describe them; an omitempty field is
// optional) and then spelt as the official server spells its own, whose
// names, types, defaults and nullable arguments osb's must match:
//   - an optional argument has a default: its `default` tag, or else its
//     zero value (null for a pointer, a slice or a map);
//   - an argument one must give takes no null (a nil slice is null in Go);
//   - null is allowed as anyOf [T, null], the description outside;
//   - objects take unknown properties, and `enum` tags list the values
//     a string may take;
//   - osb's own connect_if_missing comes after the official arguments.
func inputSchema[In any]() *jsonschema.Schema {
	t := reflect.TypeFor[In]()
	s := derive(t)
	settle(t, s)
	if i := slices.Index(s.PropertyOrder, "connect_if_missing"); i >= 0 {
		s.PropertyOrder = append(slices.Delete(s.PropertyOrder, i, i+1), "connect_if_missing")
	}
	return s
}

// settle applies inputSchema's spelling to the object schema s of the
// struct t (or of the struct a pointer or slice t holds).
func settle(t reflect.Type, s *jsonschema.Schema) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			s = s.Items
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	s.AdditionalProperties = nil
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p, ok := s.Properties[name]
		if f.Anonymous || !ok {
			continue
		}
		settle(f.Type, p)
		if values, ok := f.Tag.Lookup("enum"); ok {
			for _, v := range strings.Split(values, ",") {
				p.Enum = append(p.Enum, v)
			}
		}
		switch def, ok := f.Tag.Lookup("default"); {
		case slices.Contains(s.Required, name):
			if len(p.Types) == 2 {
				p.Type, p.Types = p.Types[1], nil
			}
		case !ok:
			p.Default = mustJSON(reflect.Zero(f.Type).Interface())
		case p.Type == "string" || slices.Contains(p.Types, "string"):
			p.Default = mustJSON(def)
		default:
			p.Default = json.RawMessage(def)
		}
		s.Properties[name] = orNull(p)
	}
}

// orNull spells a schema that takes null as the official server does.
func orNull(s *jsonschema.Schema) *jsonschema.Schema {
	if len(s.Types) != 2 || s.Types[0] != "null" {
		return s
	}
	inner := *s
	inner.Type, inner.Types, inner.Description, inner.Default = s.Types[1], nil, "", nil
	return &jsonschema.Schema{Description: s.Description, Default: s.Default,
		AnyOf: []*jsonschema.Schema{&inner, {Type: "null"}}}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// outputSchema is the schema of a tool's result, inferred from its type as
// the SDK would.
func outputSchema[Out any]() *jsonschema.Schema {
	t := reflect.TypeFor[Out]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return derive(t)
}

// derive infers the schema of t but for the types that encoding/json
// writes otherwise than inference assumes: a nil map is written as null (so
// a map may be null, as in the official server's schemas: the views keep
// every key, null when unset), a client.Time as the server's text, a
// json.Number as a number.
func derive(t reflect.Type) *jsonschema.Schema {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: schemaTypes})
	if err != nil {
		panic(err) // an argument or result type of ours that has no schema: a bug
	}
	return s
}

var schemaTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[map[string]string](): {Types: []string{"null", "object"}, AdditionalProperties: &jsonschema.Schema{Type: "string"}},
	reflect.TypeFor[client.Time]():       {Type: "string"},
	reflect.TypeFor[json.Number]():       {Type: "number"},
}

// Arguments shared by many tools.

// sandboxArgs names a sandbox.
type sandboxArgs struct {
	SandboxID string `json:"sandbox_id" jsonschema:"Id of the sandbox, as sandbox_create or sandbox_connect returned it."`
}
