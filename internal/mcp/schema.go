package mcp

import (
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/osb-dev/osb/internal/client"
)

// The input schemas are written out rather than inferred from the argument
// structs: names, types, defaults and which arguments may be null must be
// exactly the official server's, and inference cannot express defaults or
// nullable scalars.

// param is one argument of a tool.
type param struct {
	name     string
	schema   *jsonschema.Schema
	required bool
}

// args builds a tool's input schema from its parameters.
func args(params ...param) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, p := range params {
		s.Properties[p.name] = p.schema
		s.PropertyOrder = append(s.PropertyOrder, p.name)
		if p.required {
			s.Required = append(s.Required, p.name)
		}
	}
	return s
}

// required is an argument the caller must give.
func required(name string, s *jsonschema.Schema, desc string) param {
	s.Description = desc
	return param{name: name, schema: s, required: true}
}

// optional is an argument with a default; def nil means JSON null.
func optional(name string, s *jsonschema.Schema, def any, desc string) param {
	s.Description = desc
	s.Default = mustJSON(def)
	return param{name: name, schema: s}
}

// object is a nested object schema.
func object(params ...param) *jsonschema.Schema { return args(params...) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func str() *jsonschema.Schema     { return &jsonschema.Schema{Type: "string"} }
func number() *jsonschema.Schema  { return &jsonschema.Schema{Type: "number"} }
func integer() *jsonschema.Schema { return &jsonschema.Schema{Type: "integer"} }
func boolean() *jsonschema.Schema { return &jsonschema.Schema{Type: "boolean"} }

func list(items *jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: items}
}

func stringMap() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", AdditionalProperties: str()}
}

func enum(values ...string) *jsonschema.Schema {
	s := str()
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

// orNull accepts s or JSON null, spelled as the official server spells it.
func orNull(s *jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{s, {Type: "null"}}}
}

// Arguments shared by many tools.

func sandboxIDParam() param {
	return required("sandbox_id", str(), "Id of the sandbox, as sandbox_create or sandbox_connect returned it.")
}

func connectIfMissingParam() param {
	return optional("connect_if_missing", boolean(), false,
		"When the sandbox is not registered with this server yet, connect to it (and register it) instead of failing.")
}

// outputSchema is the schema of a tool's result, inferred from its type as
// the SDK would, but for the types that encoding/json writes otherwise than
// inference assumes: a nil map is written as null (so a map may be null, as
// in the official server's schemas: the views keep every key, null when
// unset), a client.Time as the server's text, a json.Number as a number.
func outputSchema[Out any]() *jsonschema.Schema {
	t := reflect.TypeFor[Out]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: outputTypes})
	if err != nil {
		panic(err) // a result type of ours that has no schema: a bug
	}
	return s
}

var outputTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[map[string]string](): {Types: []string{"null", "object"}, AdditionalProperties: str()},
	reflect.TypeFor[client.Time]():       str(),
	reflect.TypeFor[json.Number]():       number(),
}
