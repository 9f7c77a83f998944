package differential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Normalising: only what differs by nature between two servers, however
// right both are — ids, timestamps, durations, host names and ports.
var normalisers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`), "<time>"},
	{regexp.MustCompile(`(":\s*)1[6-9]\d{11}\b`), `$1"<time>"`}, // Unix milliseconds, a JSON value
	{regexp.MustCompile(`\b1[6-9]\d{11}\b`), "<time>"},
	{regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<id>"},
	{regexp.MustCompile(`\b[0-9a-f]{32}\b`), "<id>"},
	{regexp.MustCompile(`\bsnap_[0-9a-f]+\b`), "<id>"},
	{regexp.MustCompile(`\b[0-9a-f]{12}\b`), "<id>"}, // a container's short id
	{regexp.MustCompile(`\b(127\.0\.0\.1|localhost|\[::1\]|0\.0\.0\.0):\d+\b`), "<host>"},
	// An endpoint's path is the server's to choose: the real one proxies
	// at /proxy/<port>, osb server under the sandbox's own path.
	{regexp.MustCompile(`/sandboxes/[^/\s]+/proxy/(\d+)`), "/proxy/$1"},
	{regexp.MustCompile(`\b\d+:\d{2}:\d{2}(\.\d+)?\b`), "<duration>"}, // 0:09:59
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s)\b`), "<duration>"},
	{regexp.MustCompile(`("duration"\s*:\s*)[0-9.]+`), `$1"<duration>"`}, // seconds, in JSON
	// Table columns are as wide as the ids in them, which differ in length.
	{regexp.MustCompile(`(\S)  +`), "$1  "},
}

// normalise rewrites one output: the scenario's own values (sandbox ids,
// local paths) become their names, then the patterns above apply.
func normalise(s string, vars map[string]string) string {
	names := slices.SortedFunc(maps.Keys(vars), func(a, b string) int { return len(vars[b]) - len(vars[a]) })
	for _, name := range names {
		if v := vars[name]; len(v) >= 8 {
			s = strings.ReplaceAll(s, v, "<"+name+">")
		}
	}
	for _, n := range normalisers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// difference is one part of a step's outcome that is not the same on both
// servers: exit, stdout, stderr, or "stdout .json.path" where both printed JSON.
type difference struct {
	part      string
	real, osb string
}

// compare lists what differs between two normalised outcomes of a step.
func compare(real, osb outcome) []difference {
	var diffs []difference
	if real.code != osb.code {
		diffs = append(diffs, difference{"exit", fmt.Sprint(real.code), fmt.Sprint(osb.code)})
	}
	diffs = append(diffs, compareText("stdout", real.stdout, osb.stdout)...)
	diffs = append(diffs, compareText("stderr", real.stderr, osb.stderr)...)
	return diffs
}

func compareText(part, real, osb string) []difference {
	if real == osb {
		return nil
	}
	a, errA := decodeJSON(real)
	b, errB := decodeJSON(osb)
	if errA != nil || errB != nil {
		return []difference{{part, real, osb}}
	}
	var diffs []difference
	compareJSON(part+" ", a, b, &diffs)
	if len(diffs) == 0 { // same values, other layout
		diffs = append(diffs, difference{part, real, osb})
	}
	return diffs
}

// decodeJSON reads a whole output that is one JSON value, or one per line
// (as the MCP driver prints), keeping numbers as written.
func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var values []any
	for {
		var v any
		err := dec.Decode(&v)
		if err != nil {
			if err.Error() == "EOF" && len(values) > 0 {
				break
			}
			return nil, err
		}
		values = append(values, v)
	}
	if len(values) == 1 {
		return values[0], nil
	}
	return values, nil
}

// compareJSON adds a difference for each path where a and b differ; array
// indices show as [], so that one table row covers every element.
func compareJSON(path string, a, b any, diffs *[]difference) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := slices.Sorted(maps.Keys(x))
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			va, inA := x[k]
			vb, inB := y[k]
			switch {
			case !inA:
				*diffs = append(*diffs, difference{path + "." + k, "(no key)", show(vb)})
			case !inB:
				*diffs = append(*diffs, difference{path + "." + k, show(va), "(no key)"})
			default:
				compareJSON(path+"."+k, va, vb, diffs)
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		for i := range x {
			compareJSON(path+"[]", x[i], y[i], diffs)
		}
		return
	}
	if show(a) != show(b) {
		*diffs = append(*diffs, difference{strings.TrimSuffix(path, " "), show(a), show(b)})
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// known is one row of the table of known differences in docs/server.md.
type known struct {
	scenario, step, part, why string
	// maybe: the difference depends on timing (its what ends in "?"), so
	// a run where it does not show leaves the row standing.
	maybe bool
}

const knownHeading = "## Where osb server differs from OpenSandbox"

// readKnown parses the table of known differences: the first table under
// knownHeading, columns scenario, step, what (exit, stdout, stderr,
// stdout .json.path, .json.path for every such path, * for all; a "?" after
// it for a difference that depends on timing) and why.
func readKnown(path string) ([]known, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	_, section, ok := bytes.Cut(data, []byte(knownHeading+"\n"))
	if !ok {
		return nil, fmt.Errorf("%s has no section %q", path, knownHeading)
	}
	var rows []known
	inTable := false
	for _, line := range strings.Split(string(section), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		if !inTable { // the header row, then the |---| row
			inTable = true
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("%s: a row of %q has %d cells, want 4 (scenario, step, what, why): %s", path, knownHeading, len(cells), line)
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		if strings.Trim(cells[0], "-") == "" {
			continue
		}
		if cells[3] == "" {
			return nil, fmt.Errorf("%s: the row %s/%s %s gives no reason", path, cells[0], cells[1], cells[2])
		}
		part, maybe := strings.CutSuffix(cells[2], "?")
		rows = append(rows, known{cells[0], cells[1], part, cells[3], maybe})
	}
	if !inTable {
		return nil, fmt.Errorf("%s: no table under %q", path, knownHeading)
	}
	return rows, nil
}

// covers says whether a row explains a difference of a scenario's step: a
// row for stdout covers its JSON paths too, and one whose what starts with
// "." every JSON path that ends so (".status.reason" covers
// "stdout .items[].status.reason").
func (k known) covers(scenario, step string, d difference) bool {
	if (k.scenario != scenario && k.scenario != "*") || (k.step != step && k.step != "*") {
		return false
	}
	if k.part == "*" {
		return true
	}
	if strings.HasPrefix(k.part, ".") {
		return strings.HasSuffix(d.part, k.part)
	}
	return k.part == d.part || strings.HasPrefix(d.part, k.part+" ") ||
		strings.HasPrefix(d.part, k.part+".") || strings.HasPrefix(d.part, k.part+"[")
}
