package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
)

// KV is one key and value of an ordered object.
type KV struct {
	Key   string
	Value any
}

// Obj is a JSON object that keeps its keys in the order they were added.
type Obj []KV

// MarshalJSON writes the keys in order.
func (o Obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(kv.Key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(kv.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Get returns the value stored under key, and whether it was there.
func (o Obj) Get(key string) (any, bool) {
	for _, kv := range o {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// marshal encodes without HTML escaping, keeping non-ASCII text as it is.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// JSON renders v indented by two spaces, with a final newline.
func JSON(v any) ([]byte, error) {
	compact, err := marshal(v)
	if err != nil {
		return nil, err
	}
	b := indent(make([]byte, 0, len(compact)*2), compact, "", "  ")
	return append(b, '\n'), nil
}

// CompactJSON renders v on one line, with a final newline.
func CompactJSON(v any) ([]byte, error) {
	b, err := marshal(v)
	return append(b, '\n'), err
}

// YAML renders v through its JSON form, so one set of json tags defines both
// formats, with keys sorted and block style.
func YAML(v any) ([]byte, error) {
	generic, err := toGeneric(v)
	if err != nil {
		return nil, err
	}
	b, err := yaml.MarshalWithOptions(generic, yaml.Indent(2), yaml.IndentSequence(false), yaml.UseSingleQuote(true))
	if err != nil {
		return nil, err
	}
	return append(bytes.TrimRight(b, "\n"), '\n'), nil
}

// toGeneric turns v into maps, slices and scalars, keeping integers integral.
func toGeneric(v any) (any, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return fixNumbers(out), nil
}

func fixNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = fixNumbers(e)
		}
	case json.Number:
		return yamlNumber(t)
	case string:
		if yamlAmbiguous().MatchString(t) {
			return quotedString(t)
		}
	}
	return v
}

// yamlAmbiguous matches text the YAML encoder would leave bare although a
// YAML 1.1 or 1.2 reader takes it for a number: 0:30:00, 1e3, .inf, .nan.
// Compiled on first use, not at start-up, which every command pays for.
var yamlAmbiguous = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[-+]?(\d[\d_]*(:[0-5]?\d)+(\.[\d_]*)?|(\.\d+|\d+(\.\d*)?)([eE][-+]?\d+)?|\.(inf|Inf|INF)|\.(nan|NaN|NAN))$`)
})

// yamlNumber is a number written as the JSON document has it, so 2.0
// stays 2.0 and a large integer keeps every digit.
type yamlNumber string

func (n yamlNumber) MarshalYAML() ([]byte, error) { return []byte(n), nil }

// quotedString is written as a single-quoted YAML scalar.
type quotedString string

func (q quotedString) MarshalYAML() ([]byte, error) {
	return []byte("'" + strings.ReplaceAll(string(q), "'", "''") + "'"), nil
}

// forEachKey calls fn with each key of a JSON object and its raw value,
// in the order they are written.
func forEachKey(b []byte, fn func(string, json.RawMessage)) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("cannot show %s as a table: not an object", b)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		fn(tok.(string), raw)
	}
	return nil
}

func errNotList(v any) error { return fmt.Errorf("cannot show %T as a table: not a list", v) }

// Cell renders a value for a table cell: text as is, null as "-", anything
// else as compact JSON.
func Cell(v any) string {
	raw, ok := v.(json.RawMessage)
	if !ok {
		if s, isString := v.(string); isString {
			return s
		}
		b, err := marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		raw = b
	}
	if string(raw) == "null" {
		return "-"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// indent appends src, compact JSON from marshal, to dst laid out as
// json.Indent lays it out with prefix and indent: the same bytes, without
// json.Indent's validation of input that is valid by construction.
func indent(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			end := i + 1
			for end < len(src) && src[end] != '"' {
				if src[end] == '\\' {
					end++
				}
				end++
			}
			dst = append(dst, src[i:end+1]...)
			i = end
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
