package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/template"
	"time"

	"github.com/tidwall/gjson"
)

// Filter turns the JSON document a command prints under -o json into what
// --jq or --template asked for. Its zero value passes the document through.
type Filter struct {
	Query    string             // a gjson path (-q)
	JQ       *JQ                // a jq expression (--jq)
	Template *template.Template // parsed by ParseTemplate
	Now      func() time.Time   // the clock of timeago; nil: time.Now
}

// Active reports whether the filter changes anything.
func (f Filter) Active() bool { return f.Query != "" || f.JQ != nil || f.Template != nil }

// CheckQuery finds the mistakes gjson would silently take for a path that
// matches nothing: unbalanced brackets or quotes, empty parts, unknown
// modifiers. It runs before any request.
func CheckQuery(q string) error {
	if strings.TrimSpace(q) == "" {
		return errors.New("the path is empty")
	}
	var stack []byte
	closing := map[byte]byte{'[': ']', '{': '}', '(': ')'}
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '\\':
			i++
		case '"':
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				return fmt.Errorf("unterminated quote at %d", i+1)
			}
			i += end + 1
		case '[', '{', '(':
			stack = append(stack, closing[c])
		case ']', '}', ')':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return fmt.Errorf("unbalanced %q at %d", c, i+1)
			}
			stack = stack[:len(stack)-1]
		case '.', '|':
			if len(stack) == 0 && (i == 0 || i == len(q)-1 || q[i+1] == '.' || q[i+1] == '|') {
				return fmt.Errorf("empty part at %d", i+1)
			}
		case '@':
			if i == 0 || q[i-1] == '.' || q[i-1] == '|' {
				name := q[i+1:]
				if j := strings.IndexAny(name, ".|:"); j >= 0 {
					name = name[:j]
				}
				if !gjson.ModifierExists(name, nil) {
					return fmt.Errorf("unknown modifier @%s", name)
				}
			}
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("missing %q", stack[len(stack)-1])
	}
	return nil
}

// TemplateFuncs are the helpers --template offers beside Go's own.
func templateFuncs(now func() time.Time, rows *[][]string) template.FuncMap {
	return template.FuncMap{
		"json": func(v any) (string, error) {
			b, err := marshal(v)
			return string(b), err
		},
		"timeago": func(v any) string { return timeAgo(fmt.Sprint(v), now()) },
		"join": func(sep string, v any) string {
			items, _ := v.([]any)
			parts := make([]string, len(items))
			for i, it := range items {
				parts[i] = Cell(it)
			}
			return strings.Join(parts, sep)
		},
		"tablerow": func(cells ...any) string {
			row := make([]string, len(cells))
			for i, c := range cells {
				row[i] = Printable(Cell(c))
			}
			*rows = append(*rows, row)
			return ""
		},
		"tablerender": func() (string, error) {
			var b strings.Builder
			err := renderTable(&b, nil, *rows, false)
			*rows = nil
			return b.String(), err
		},
		"table": func(v any, keys ...string) (string, error) {
			items, ok := v.([]any)
			if !ok {
				return "", fmt.Errorf("table wants a list, got %s", kindOf(v))
			}
			headers := make([]string, len(keys))
			for i, k := range keys {
				headers[i] = strings.ToUpper(k)
			}
			body := make([][]string, len(items))
			for i, it := range items {
				obj, _ := it.(map[string]any)
				body[i] = make([]string, len(keys))
				for j, k := range keys {
					body[i][j] = Printable(Cell(obj[k]))
				}
			}
			var b strings.Builder
			err := renderTable(&b, headers, body, false)
			return b.String(), err
		},
	}
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// ParseTemplate reads a --template text; a mistake in it is found before
// any request.
func ParseTemplate(text string) (*template.Template, error) {
	var rows [][]string
	return template.New("--template").Option("missingkey=error").Funcs(templateFuncs(time.Now, &rows)).Parse(text)
}

// apply writes doc (one JSON document) through the filter to w.
func (f Filter) apply(w io.Writer, doc []byte) error {
	if f.Template != nil {
		return f.execute(w, doc)
	}
	if f.JQ != nil {
		return f.JQ.run(w, doc)
	}
	res := gjson.GetBytes(doc, f.Query)
	if !res.Exists() {
		return &QueryError{Flag: "-q", Query: f.Query, Keys: topKeys(doc)}
	}
	var b bytes.Buffer
	writeResult(&b, res)
	_, err := w.Write(b.Bytes())
	return err
}

// execute runs the template over the decoded document. The helpers that
// collect table rows get a fresh table for each document.
func (f Filter) execute(w io.Writer, doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var data any
	if err := dec.Decode(&data); err != nil {
		return err
	}
	t, err := f.Template.Clone()
	if err != nil {
		return err
	}
	var rows [][]string
	now := f.Now
	if now == nil {
		now = time.Now
	}
	t.Funcs(templateFuncs(now, &rows))
	return t.Execute(w, data)
}

// writeResult prints a gjson result for a shell: text without quotes,
// numbers, booleans and null as JSON, a list of such values one per line,
// anything else as indented JSON.
func writeResult(b *bytes.Buffer, r gjson.Result) {
	switch {
	case r.Type == gjson.String:
		b.WriteString(r.Str)
		b.WriteByte('\n')
	case r.IsArray() && scalars(r):
		for _, e := range r.Array() {
			writeResult(b, e)
		}
	case r.IsArray() || r.IsObject():
		json.Indent(b, []byte(r.Raw), "", "  ")
		b.WriteByte('\n')
	default:
		b.WriteString(r.Raw)
		b.WriteByte('\n')
	}
}

func scalars(r gjson.Result) bool {
	for _, e := range r.Array() {
		if e.IsArray() || e.IsObject() {
			return false
		}
	}
	return true
}

// QueryError is a -q path or a --jq expression that matched nothing in
// the output (Keys: what is there), or a jq expression that failed on it
// (Reason).
type QueryError struct {
	Flag   string // -q or --jq
	Query  string
	Keys   []string
	Reason string
}

func (e *QueryError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("--jq '%s' failed on the output: %s", e.Query, e.Reason)
	}
	msg := fmt.Sprintf("%s '%s' matched nothing in the output", e.Flag, e.Query)
	if len(e.Keys) > 0 {
		msg += "; its top-level keys are: " + strings.Join(e.Keys, ", ")
	}
	return msg
}

func topKeys(doc []byte) []string {
	var keys []string
	gjson.ParseBytes(doc).ForEach(func(k, _ gjson.Result) bool {
		if k.Type == gjson.String {
			keys = append(keys, k.Str)
		}
		return true
	})
	return keys
}

// timeAgo renders an RFC 3339 time relative to now, as a person reads it;
// any other text is returned as it is.
func timeAgo(s string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	d := now.Sub(t)
	suffix := "ago"
	if d < 0 {
		d, suffix = -d, "from now"
	}
	unit := func(n int64, name string) string {
		if n != 1 {
			name += "s"
		}
		return fmt.Sprintf("%d %s %s", n, name, suffix)
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return unit(int64(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return unit(int64(d/time.Hour), "hour")
	}
	return unit(int64(d/(24*time.Hour)), "day")
}
