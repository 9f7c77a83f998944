package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// object is a decoded JSON object that remembers its key order: the
// official CLI prints keys in its models' order, and so must we.
type object struct {
	keys []string
	vals map[string]any
}

// decodeOrdered decodes one JSON value into object, []any, json.Number,
// string, bool or nil.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k.(string))
			o.vals[k.(string)] = v
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

// diffJSON lists every difference between the official CLI's value a and
// ours b, one line per key path: missing keys, extra keys, key order, values.
// Numbers compare by value (Python prints 2.0 where Go prints 2).
func diffJSON(path string, a, b any) []string {
	switch av := a.(type) {
	case *object:
		bv, ok := b.(*object)
		if !ok {
			break
		}
		return diffObjects(path, av, bv)
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		var out []string
		if len(av) != len(bv) {
			out = append(out, fmt.Sprintf("%s: official has %d items, ours %d", show(path), len(av), len(bv)))
		}
		for i := 0; i < len(av) && i < len(bv); i++ {
			out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i])...)
		}
		return out
	case json.Number:
		if bv, ok := b.(json.Number); ok {
			x, _ := strconv.ParseFloat(string(av), 64)
			y, _ := strconv.ParseFloat(string(bv), 64)
			if x == y {
				return nil
			}
		}
	default:
		if a == b {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: official %s, ours %s", show(path), render(a), render(b))}
}

func diffObjects(path string, a, b *object) []string {
	var out []string
	for _, k := range a.keys {
		if _, ok := b.vals[k]; !ok {
			out = append(out, fmt.Sprintf("%s: official %s, ours has no such key", join(path, k), render(a.vals[k])))
		}
	}
	for _, k := range b.keys {
		if _, ok := a.vals[k]; !ok {
			out = append(out, fmt.Sprintf("%s: official has no such key, ours %s", join(path, k), render(b.vals[k])))
		}
	}
	common, bCommon := shared(a, b), shared(b, a)
	if !slices.Equal(common, bCommon) {
		out = append(out, fmt.Sprintf("%s: key order: official %v, ours %v", show(path), common, bCommon))
	}
	for _, k := range common {
		out = append(out, diffJSON(join(path, k), a.vals[k], b.vals[k])...)
	}
	return out
}

// shared lists the keys of a that b has too, in a's order.
func shared(a, b *object) []string {
	var keys []string
	for _, k := range a.keys {
		if _, ok := b.vals[k]; ok {
			keys = append(keys, k)
		}
	}
	return keys
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func show(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

// render prints a decoded value compactly for a difference line.
func render(v any) string {
	switch x := v.(type) {
	case *object:
		parts := make([]string, len(x.keys))
		for i, k := range x.keys {
			parts[i] = strconv.Quote(k) + ":" + render(x.vals[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprint(v)
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// mask replaces, in place, the value at every key path in vary (indices
// written as []) with a placeholder, and every occurrence of each key of
// replace inside strings with its value. A null or absent value is left
// alone, so that a client printing nothing where the other prints a value
// still shows up as a difference.
func mask(v any, path string, vary map[string]bool, replace map[string]string) any {
	switch x := v.(type) {
	case *object:
		for _, k := range x.keys {
			p := join(path, k)
			if vary[indexRE.ReplaceAllString(p, "[]")] && x.vals[k] != nil {
				x.vals[k] = "<varies>"
				continue
			}
			x.vals[k] = mask(x.vals[k], p, vary, replace)
		}
	case []any:
		for i := range x {
			x[i] = mask(x[i], fmt.Sprintf("%s[%d]", path, i), vary, replace)
		}
	case string:
		for from, to := range replace {
			if from != "" {
				x = strings.ReplaceAll(x, from, to)
			}
		}
		return x
	}
	return v
}

// cmp is one comparison of the official CLI's `-o json` output with ours.
type cmp struct {
	// args builds the command line for the object the CLI works on (its
	// half of a twin, or the one shared object); -o json is added.
	args func(obj string) []string
	// vary lists key paths whose values necessarily differ between the two
	// runs (a new id, a time computed from the client's clock), each with
	// the reason; both must still be present and non-null.
	vary map[string]string
	// label names the twin objects in output (e.g. "<SANDBOX>").
	label string
	// also labels more pairs of strings that differ only because each CLI
	// works on its own copy (e.g. local download targets).
	also map[string]twin
}

// same compares the two CLIs on one shared object (a read that changes
// nothing): the outputs must be identical but for cmp.vary.
func (h *harness) same(t *testing.T, obj string, c cmp) (official, ours any) {
	t.Helper()
	return h.compare(t, twin{obj, obj}, c)
}

// compare runs c's command line through the official CLI on tw[0] and
// through ours on tw[1], and reports every key whose value differs once the
// twin ids are replaced by c.label and the paths of c.vary masked. It
// returns both decoded outputs for further checks.
func (h *harness) compare(t *testing.T, tw twin, c cmp) (official, ours any) {
	t.Helper()
	offArgs := withJSON(c.args(tw[0]))
	ourArgs := withJSON(c.args(tw[1]))
	offOut := h.officialOK(t, offArgs...)
	r := h.ours.Run(ourArgs...)
	if r.Code != 0 {
		t.Fatalf("our osb %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(ourArgs, " "), r.Code, r.Stdout, r.Stderr)
	}
	official = decodeOutput(t, "official", offOut)
	ours = decodeOutput(t, "our", r.Stdout)
	vary := map[string]bool{}
	for k := range c.vary {
		vary[k] = true
	}
	label := c.label
	if label == "" {
		label = "<ID>"
	}
	offReplace, ourReplace := map[string]string{tw[0]: label}, map[string]string{tw[1]: label}
	for l, pair := range c.also {
		offReplace[pair[0]], ourReplace[pair[1]] = l, l
	}
	mask(official, "", vary, offReplace)
	mask(ours, "", vary, ourReplace)
	if d := diffJSON("", official, ours); len(d) > 0 {
		t.Errorf("osb %s -o json: the official CLI and ours differ:\n  %s\nofficial:\n%s\nours:\n%s",
			strings.Join(c.args("ID"), " "), strings.Join(d, "\n  "), offOut, r.Stdout)
	}
	return official, ours
}

// withJSON adds -o json to a command line, before its "--" if it has one.
func withJSON(argv []string) []string {
	i := slices.Index(argv, "--")
	if i < 0 {
		i = len(argv)
	}
	return slices.Concat(argv[:i], []string{"-o", "json"}, argv[i:])
}

func decodeOutput(t *testing.T, who, out string) any {
	t.Helper()
	v, err := decodeOrdered([]byte(out))
	if err != nil {
		t.Fatalf("%s CLI printed no single JSON value (%v):\n%s", who, err, out)
	}
	return v
}

// sameRaw compares the stdout of a raw-output command line (file cat,
// command run, logs) byte for byte, on one object, and returns it.
func (h *harness) sameRaw(t *testing.T, args ...string) string {
	t.Helper()
	off := h.officialOK(t, args...)
	ours := h.ours.Run(args...)
	if ours.Stdout != off {
		t.Errorf("osb %s: stdout differs\nofficial: %q\nours:     %q", strings.Join(args, " "), off, ours.Stdout)
	}
	return off
}

func decodeInto(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
}

// args is a cmp.args for a command line that takes the object as its
// argument at the first "ID".
func args(words ...string) func(string) []string {
	return func(obj string) []string {
		out := make([]string, len(words))
		for i, w := range words {
			if w == "ID" {
				w = obj
			}
			out[i] = w
		}
		return out
	}
}

func TestDiffJSON(t *testing.T) {
	a, _ := decodeOrdered([]byte(`{"id":"x","n":2.0,"s":{"a":null,"b":[1,2]},"only":1}`))
	b, _ := decodeOrdered([]byte(`{"n":2,"id":"x","s":{"a":"v","b":[1]},"extra":true}`))
	got := diffJSON("", a, b)
	want := []string{
		`only: official 1, ours has no such key`,
		`extra: official has no such key, ours true`,
		`(top level): key order: official [id n s], ours [n id s]`,
		`s.a: official null, ours "v"`,
		`s.b: official has 2 items, ours 1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diffJSON:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m, _ := decodeOrdered([]byte(`{"items":[{"id":"a","t":null}],"msg":"made sb-1"}`))
	mask(m, "", map[string]bool{"items[].id": true, "items[].t": true}, map[string]string{"sb-1": "<S>"})
	if got := render(m); got != `{"items":[{"id":"<varies>","t":null}],"msg":"made <S>"}` {
		t.Errorf("mask: %s", got)
	}
}
