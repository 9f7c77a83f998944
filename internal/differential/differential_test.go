package differential

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// TestDifferential runs every scenario against the real OpenSandbox and
// against osb server, side by side, and fails on each difference the table
// of known differences does not explain, and on each row of that table that
// explains nothing any more.
func TestDifferential(t *testing.T) {
	real := realStack(t)
	started := time.Now()
	root := repoRoot(t)
	rows, err := readKnown(filepath.Join(root, "docs", "server.md"))
	if err != nil {
		t.Fatal(err)
	}
	bin := cmdtest.BuildOsb(t)
	local := osbServer(t, bin)
	py, noMCP := mcpPython(root)

	var mu sync.Mutex
	used := map[known]bool{}
	ran := map[string]bool{}
	t.Cleanup(func() {
		// A row for every scenario is stale only when every scenario ran
		// (not under -run, not with one skipped).
		all := len(ran) == len(scenarios())
		for _, k := range rows {
			if (ran[k.scenario] || (k.scenario == "*" && all)) && !used[k] && !k.maybe && !t.Failed() {
				t.Errorf("docs/server.md: the known difference %s/%s %q no longer shows; remove its row", k.scenario, k.step, k.part)
			}
		}
		t.Logf("%d scenarios in %s", len(ran), time.Since(started).Round(time.Second))
	})
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range scenarios() {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				if sc.needs == "mcp" && py == "" {
					t.Skip(noMCP)
				}
				results := playBoth(t, sc, bin, py, real, local)
				mu.Lock()
				defer mu.Unlock()
				ran[sc.name] = true
				for _, r := range results {
					if r.real.unmet != "" && r.osb.unmet != "" {
						t.Errorf("step %s: %s: neither server ever printed %q: the scenario waits for the wrong thing", r.real.step, r.osb.line, r.real.unmet)
					}
					for _, d := range r.diffs {
						if k, ok := explained(rows, sc.name, r.real.step, d); ok {
							used[k] = true
							continue
						}
						t.Errorf("step %s: %s\n  %s differs:\n  real OpenSandbox: %s\n  osb server:       %s",
							r.real.step, r.real.line, d.part, quoteBlock(d.real), quoteBlock(d.osb))
					}
				}
			})
		}
	})
}

func explained(rows []known, scenario, step string, d difference) (known, bool) {
	for _, k := range rows {
		if k.covers(scenario, step, d) {
			return k, true
		}
	}
	return known{}, false
}

type stepResult struct {
	real, osb outcome
	diffs     []difference
}

// playBoth runs a scenario against both servers at once and compares their
// outcomes step by step.
func playBoth(t *testing.T, sc scenario, bin, py string, real, local target) []stepResult {
	var outs [2][]outcome
	var plays [2]*play
	var wg sync.WaitGroup
	for i, tgt := range []target{real, local} {
		home, dir := t.TempDir(), t.TempDir()
		plays[i] = &play{tgt: tgt, bin: bin, py: py, home: home, vars: map[string]string{"local": dir, "run": randomToken()}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = plays[i].run(sc)
		}()
	}
	wg.Wait()
	if len(outs[0]) != len(outs[1]) {
		t.Fatalf("the scenario ran %d steps on the real server and %d on osb server", len(outs[0]), len(outs[1]))
	}
	var results []stepResult
	for i := range outs[0] {
		a, b := outs[0][i], outs[1][i]
		for j, o := range []*outcome{&a, &b} {
			o.stdout = normalise(o.stdout, plays[j].vars)
			o.stderr = normalise(o.stderr, plays[j].vars)
		}
		results = append(results, stepResult{real: a, osb: b, diffs: compare(a, b)})
	}
	return results
}

// randomToken tells one play's sandboxes from the others' on a server.
func randomToken() string {
	return fmt.Sprintf("run%09d", rand.IntN(1e9))
}

// quoteBlock shows a value on one line when short, else indented below.
func quoteBlock(s string) string {
	if len(s) > 6000 {
		s = s[:6000] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	if !strings.Contains(strings.TrimSuffix(s, "\n"), "\n") {
		return fmt.Sprintf("%q", s)
	}
	return "\n    | " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    | ")
}

// The table of known differences parses, and every row names a scenario
// and a step that exist: a row cannot outlive what it explains unnoticed.
func TestKnownDifferencesNameScenarios(t *testing.T) {
	rows, err := readKnown(filepath.Join(repoRoot(t), "docs", "server.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]map[string]bool{}
	for _, sc := range scenarios() {
		steps[sc.name] = map[string]bool{"*": true}
		for i, st := range sc.steps {
			name := st.name
			if name == "" {
				name = fmt.Sprint(i + 1)
			}
			steps[sc.name][name] = true
		}
	}
	for _, k := range rows {
		if k.scenario == "*" {
			if k.step != "*" {
				t.Errorf("docs/server.md: row */%s: a row for every scenario is for every step too (*)", k.step)
			}
			continue
		}
		if steps[k.scenario] == nil {
			t.Errorf("docs/server.md: row %s/%s names no scenario", k.scenario, k.step)
		} else if !steps[k.scenario][k.step] {
			t.Errorf("docs/server.md: row %s/%s names no step of that scenario", k.scenario, k.step)
		}
	}
	if _, err := os.Stat(filepath.Join(testdataDir, "mcp_calls.py")); err != nil {
		t.Error(err)
	}
}
