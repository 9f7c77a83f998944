package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/ops"
)

// toolFailure is the structured content of a failed tool call: the
// message, and the exit code osb would have ended with for the same error
// on the command line, with its name.
type toolFailure struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
	Kind     string `json:"kind"`
}

// kinds names the exit codes a tool error can carry (`osb help exit-codes`).
var kinds = map[int]string{
	ops.ExitFailure:     "error",
	ops.ExitUsage:       "usage",
	ops.ExitAuth:        "auth",
	ops.ExitNotFound:    "not_found",
	ops.ExitTimeout:     "timeout",
	ops.ExitUnreachable: "unreachable",
	ops.ExitInterrupted: "interrupted",
}

// handlerError marks an error returned by one of our tool handlers; any
// other failed call was refused by the SDK before it reached us, for
// arguments that do not fit the schema.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }

// usage is a bad argument found before any request was sent.
func usage(format string, a ...any) error { return ops.UsageErrorf(format, a...) }

func failureOf(err error) toolFailure {
	code := ops.ExitUsage
	var herr *handlerError
	if errors.As(err, &herr) {
		code = ops.ExitCode(herr.err)
	}
	kind, ok := kinds[code]
	if !ok {
		code, kind = ops.ExitFailure, kinds[ops.ExitFailure]
	}
	return toolFailure{Error: err.Error(), ExitCode: code, Kind: kind}
}

// describeErrors gives every failed tool call its exit-code meaning, in the
// text an agent reads and in structured content a program can test.
func describeErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError || r.GetError() == nil {
			return res, err
		}
		f := failureOf(r.GetError())
		r.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s (exit code %d: %s)", f.Error, f.ExitCode, f.Kind)}}
		r.StructuredContent = f
		return r, nil
	}
}

// refuseNulls answers a tool call that gives null for an argument that
// takes no null, naming the argument and what it takes. The SDK's schema
// check would refuse it too, but its message shows a Go value
// ("<invalid reflect.Value>") where the null was.
func refuseNulls(inputs map[string]*jsonschema.Schema) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil || len(call.Params.Arguments) == 0 {
				return next(ctx, method, req)
			}
			var args any
			if json.Unmarshal(call.Params.Arguments, &args) != nil {
				return next(ctx, method, req)
			}
			msg := nullArgument(inputs[call.Params.Name], args, "")
			if msg == "" {
				return next(ctx, method, req)
			}
			res := &mcp.CallToolResult{}
			res.SetError(&handlerError{usage("%s", msg)})
			return res, nil
		}
	}
}

// nullArgument describes the first null in v, found at path, that schema s
// does not accept, or returns "".
func nullArgument(s *jsonschema.Schema, v any, path string) string {
	if s == nil {
		return ""
	}
	if v == nil {
		if s.Type == "null" || slices.Contains(s.Types, "null") || slices.ContainsFunc(s.AnyOf, acceptsNull) || path == "" {
			return ""
		}
		msg := fmt.Sprintf("argument %s is null, but it must be %s", path, typeName(s))
		if len(s.Default) > 0 {
			msg += fmt.Sprintf(" (leave it out for the default, %s)", s.Default)
		}
		return msg
	}
	for _, alt := range s.AnyOf {
		if alt.Type == kindOfValue(v) {
			return nullArgument(alt, v, path)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			prop := s.Properties[k]
			if prop == nil {
				prop = s.AdditionalProperties
			}
			if msg := nullArgument(prop, v[k], p); msg != "" {
				return msg
			}
		}
	case []any:
		for i, item := range v {
			if msg := nullArgument(s.Items, item, fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func acceptsNull(s *jsonschema.Schema) bool { return s.Type == "null" }

// kindOfValue is the JSON Schema type of a decoded JSON value, for objects
// and arrays (the only ones that hold arguments further down).
func kindOfValue(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return ""
}

func typeName(s *jsonschema.Schema) string {
	switch s.Type {
	case "integer", "object", "array":
		return "an " + s.Type
	case "":
		return "a value"
	}
	return "a " + s.Type
}
