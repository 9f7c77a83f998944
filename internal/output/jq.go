package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/itchyny/gojq"
)

// JQ is a compiled --jq expression (jq's language, as gojq implements it).
type JQ struct {
	Text  string
	code  *gojq.Code
	paths *gojq.Code // path(Text): where a null result came from, when Text is a path
}

// ParseJQ compiles a --jq expression before any request. A mistake is an
// error that names jq's syntax and, when the text reads as a gjson path,
// shows the -q form of it.
func ParseJQ(text string) (*JQ, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("invalid --jq expression '': the expression is empty (jq syntax, e.g. --jq .id)")
	}
	q, err := gojq.Parse(text)
	if err == nil {
		var code *gojq.Code
		if code, err = gojq.Compile(q); err == nil {
			jq := &JQ{Text: text, code: code}
			// A newline first: a # comment at the end of the text must
			// not swallow the closing parenthesis.
			if pq, perr := gojq.Parse("path(" + text + "\n)"); perr == nil {
				jq.paths, _ = gojq.Compile(pq)
			}
			return jq, nil
		}
	}
	msg := fmt.Sprintf("invalid --jq expression '%s' (jq syntax): %v", text, err)
	if CheckQuery(text) == nil {
		msg += fmt.Sprintf("; as a gjson path that is -q '%s'", text)
		if j, ok := GJSONToJQ(text); ok {
			msg += fmt.Sprintf(", in jq --jq '%s'", j)
		}
	}
	return nil, errors.New(msg)
}

// run writes what the expression makes of doc to w: each result on its
// own line, a string as plain text, anything else as JSON (objects and
// lists indented). A null that comes from a path missing in doc is a
// QueryError, as -q's no-match is: a script's id=$(… --jq .idd) must not
// get "null".
func (j *JQ) run(w io.Writer, doc []byte) error {
	data, err := decodeJQ(doc)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	iter := j.code.Run(data)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := v.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break
			}
			return &QueryError{Flag: "--jq", Query: j.Text, Reason: err.Error()}
		}
		if v == nil && j.missing(data) {
			return &QueryError{Flag: "--jq", Query: j.Text, Keys: topKeys(doc)}
		}
		if err := writeJQValue(&b, v); err != nil {
			return err
		}
	}
	_, err = w.Write(b.Bytes())
	return err
}

// missing reports whether the expression is a path that leads out of
// data: a key or index that is not there.
func (j *JQ) missing(data any) bool {
	if j.paths == nil {
		return false
	}
	iter := j.paths.Run(data)
	for {
		p, ok := iter.Next()
		if !ok {
			return false
		}
		path, isPath := p.([]any)
		if !isPath {
			return false // an error: not a path expression
		}
		if !hasPath(data, path) {
			return true
		}
	}
}

// hasPath reports whether every step of path exists in v.
func hasPath(v any, path []any) bool {
	for _, step := range path {
		switch node := v.(type) {
		case map[string]any:
			key, ok := step.(string)
			if !ok {
				return false
			}
			if v, ok = node[key]; !ok {
				return false
			}
		case []any:
			i, ok := step.(int)
			if !ok {
				return false
			}
			if i < 0 {
				i += len(node)
			}
			if i < 0 || i >= len(node) {
				return false
			}
			v = node[i]
		default:
			return false
		}
	}
	return true
}

// decodeJQ decodes doc for gojq, numbers as json.Number so large integers
// keep every digit (gojq normalises them).
func decodeJQ(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var data any
	if err := dec.Decode(&data); err != nil {
		return nil, err
	}
	return data, nil
}

func writeJQValue(b *bytes.Buffer, v any) error {
	if s, ok := v.(string); ok {
		b.WriteString(s)
		b.WriteByte('\n')
		return nil
	}
	raw, err := gojq.Marshal(v)
	if err != nil {
		return err
	}
	switch v.(type) {
	case map[string]any, []any:
		if err := json.Indent(b, raw, "", "  "); err != nil {
			return err
		}
	default:
		b.Write(raw)
	}
	b.WriteByte('\n')
	return nil
}

// Compiled on first use, not at start-up, which every command pays for.
var (
	gjsonKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	gjsonNum = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+$`) })
)

// GJSONToJQ writes a plain gjson path (keys, indexes, # and #.key) as the
// jq expression that prints the same; ok is false for anything richer
// (queries, modifiers, wildcards, escapes).
func GJSONToJQ(path string) (string, bool) {
	if strings.ContainsAny(path, `\*?@|()!=<>"`) || path == "" {
		return "", false
	}
	var b strings.Builder
	parts := strings.Split(path, ".")
	for i, part := range parts {
		switch {
		case part == "#" && i == len(parts)-1:
			if b.Len() == 0 {
				b.WriteString(".")
			}
			b.WriteString(" | length")
		case part == "#":
			b.WriteString("[]")
		case gjsonNum().MatchString(part):
			fmt.Fprintf(&b, ".[%s]", part)
		case gjsonKey().MatchString(part):
			b.WriteString("." + part)
		case part != "" && !strings.ContainsAny(part, "[]{}#,"):
			fmt.Fprintf(&b, ".%q", part)
		default:
			return "", false
		}
	}
	s := strings.ReplaceAll(b.String(), "].[", "][")
	s = strings.ReplaceAll(s, ".[", "[")
	if strings.HasPrefix(s, "[") {
		s = "." + s
	}
	return s, true
}

var jqStep = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:\.([A-Za-z_][A-Za-z0-9_]*)|\.?\[([0-9]+)\]|\.?\[\])`)
})

// JQToGJSON writes a plain jq path (.a.b, [N], [], and a final "| length")
// as the gjson path that prints the same; ok is false for anything else.
func JQToGJSON(expr string) (string, bool) {
	s := strings.TrimSpace(expr)
	length := false
	if before, ok := strings.CutSuffix(s, "| length"); ok {
		s, length = strings.TrimSpace(before), true
	}
	if s == "." && length {
		return "#", true
	}
	if !strings.HasPrefix(s, ".") && !strings.HasPrefix(s, "[") {
		return "", false
	}
	var parts []string
	each := 0
	for s != "" {
		m := jqStep().FindStringSubmatch(s)
		if m == nil {
			return "", false
		}
		switch {
		case m[1] != "":
			parts = append(parts, m[1])
		case m[2] != "":
			parts = append(parts, m[2])
		default:
			parts = append(parts, "#")
			each++
		}
		s = s[len(m[0]):]
	}
	// A final [] is what gjson prints of the list itself; a second one
	// flattens in jq, which a gjson path does not.
	if n := len(parts); n > 0 && parts[n-1] == "#" && !length {
		parts, each = parts[:n-1], each-1
	}
	if len(parts) == 0 || each > 1 {
		return "", false
	}
	if length {
		parts = append(parts, "#")
	}
	return strings.Join(parts, "."), true
}

// CheckPath is CheckQuery with the message a user sees: it names the
// gjson syntax and, when the text is jq, shows the --jq form of it (and
// the gjson path that means the same, when there is a simple one).
func CheckPath(path string) error {
	err := CheckQuery(path)
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf("invalid -q path '%s' (gjson path syntax): %v", path, err)
	if !strings.HasPrefix(path, ".") && !strings.HasPrefix(path, "[") {
		return errors.New(msg) // jq's paths start so; anything else is no query in it
	}
	if q, perr := gojq.Parse(path); perr == nil {
		if _, cerr := gojq.Compile(q); cerr == nil {
			msg += fmt.Sprintf("; as jq that is --jq '%s'", path)
			if g, ok := JQToGJSON(path); ok {
				msg += fmt.Sprintf(", as a gjson path -q '%s'", g)
			}
		}
	}
	return errors.New(msg)
}

// ViewKeys are the top-level json keys of a view struct (its json tags,
// omitempty ones included), in order; nil for anything but a struct.
func ViewKeys(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys = append(keys, name)
	}
	return keys
}

var plainKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`) })

// CheckKeys finds, before any request, a -q path or a --jq path whose
// first key is none of the keys the output will have: after a create, the
// no-match error would come with the thing already made.
func (f Filter) CheckKeys(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	has := make(map[string]bool, len(keys))
	for _, k := range keys {
		has[k] = true
	}
	var first string
	switch {
	case f.Query != "":
		first = f.Query
		if i := strings.IndexAny(first, ".|"); i >= 0 {
			first = first[:i]
		}
		if !plainKey().MatchString(first) {
			return nil // #, wildcards, modifiers: gjson decides
		}
	case f.JQ != nil && f.JQ.paths != nil:
		doc := make(map[string]any, len(keys))
		for _, k := range keys {
			doc[k] = nil
		}
		p, ok := f.JQ.paths.Run(doc).Next()
		path, isPath := p.([]any)
		if !ok || !isPath || len(path) == 0 {
			return nil
		}
		if first, ok = path[0].(string); !ok {
			return nil
		}
	default:
		return nil
	}
	if has[first] {
		return nil
	}
	flag, query := "-q", f.Query
	if f.JQ != nil {
		flag, query = "--jq", f.JQ.Text
	}
	return fmt.Errorf("%s '%s' would match nothing in the output, whose top-level keys are: %s; nothing was sent",
		flag, query, strings.Join(keys, ", "))
}
