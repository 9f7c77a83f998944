// Package nullcheck finds the nulls in a JSON answer, for tests: the
// upstream server leaves unset optional fields out, and answers of osb
// server must too.
package nullcheck

import (
	"cmp"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Paths lists where a JSON document holds null, as paths like
// "items[0].platform"; nil when it holds none or is not JSON. The upstream
// server leaves unset optional fields out of its answers, and generated
// clients crash on a null where they expect a value, so the tests check
// every answer with it. The one null upstream does send is left out: the
// input FastAPI echoes in each detail of a 422, which is the client's own
// value (null when the client sent null).
func Paths(doc []byte) []string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return nil
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case nil:
			if !echoedInput.MatchString(path) {
				out = append(out, cmp.Or(path, "(the whole document)"))
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(strings.TrimPrefix(path+"."+k, "."), x[k])
			}
		case []any:
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		}
	}
	walk("", v)
	return out
}

var echoedInput = regexp.MustCompile(`^detail\[[0-9]+\]\.input$`)
