package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
)

var numberRE = regexp.MustCompile(`\b\d+(\.\d+)?\b`)

func TestMetrics(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := env.NewSandbox()
	for _, format := range []string{"table", "json", "yaml", "raw"} {
		r := env.Run("sandbox", "metrics", id, "-o", format).ExpectCode(t, 0)
		// The figures are the machine's; the shape is ours.
		r.Stdout = numberRE.ReplaceAllString(r.Stdout, "<N>")
		golden(t, "metrics_"+format, r, id)
	}
	env.Run("sandbox", "metrics", "0000").ExpectError(t, 4, "not found")
}

// lineWriter cancels the command once stdout holds n lines: the stand-in
// for a user pressing Ctrl-C after n samples.
type lineWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	n      int
	cancel context.CancelFunc
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Count(w.buf.Bytes(), []byte("\n")) >= w.n {
		w.cancel()
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runInterrupted runs a command line until it has printed n lines, then
// cancels it as Ctrl-C would.
func runInterrupted(t *testing.T, env *cmdtest.Env, n int, args ...string) cmdtest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ios, _, _, stderr := iostreams.Test()
	out := &lineWriter{n: n, cancel: cancel}
	ios.Out = out
	code := commands.Run(ctx, env.Factory(ios), args)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("osb %s printed fewer than %d lines in 2 minutes:\n%s", strings.Join(args, " "), n, out)
	}
	return cmdtest.Result{Stdout: out.String(), Stderr: stderr.String(), Code: code}
}

func TestMetricsWatch(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := env.NewSandbox()
	line := regexp.MustCompile(`^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] cpu=\d+\.\d\d% cores=\d+ mem=\d+\.\d\d/\d+\.\d\dMiB$`)
	// The watches run side by side: each waits for two samples.
	for _, format := range []string{"", "table", "raw"} {
		t.Run("-o "+format, func(t *testing.T) {
			t.Parallel()
			args := []string{"sandbox", "metrics", id[:7], "--watch"}
			if format != "" {
				args = append(args, "-o", format)
			}
			r := runInterrupted(t, env, 2, args...)
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("-o %q: exit %d, stderr %q", format, r.Code, r.Stderr)
			}
			for _, l := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
				if !line.MatchString(l) {
					t.Errorf("-o %q: sample line %q", format, l)
				}
			}
		})
	}
	t.Run("-o json", func(t *testing.T) {
		t.Parallel()
		r := runInterrupted(t, env, 2, "sandbox", "metrics", id, "--watch", "-o", "json")
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("-o json: exit %d, stderr %q", r.Code, r.Stderr)
		}
		for _, l := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
			var keys []string
			dec := json.NewDecoder(strings.NewReader(l))
			dec.Token()
			for dec.More() {
				k, _ := dec.Token()
				keys = append(keys, k.(string))
				var skip any
				dec.Decode(&skip)
			}
			if strings.Join(keys, ",") != "cpu_count,cpu_used_percentage,memory_total_in_mib,memory_used_in_mib,timestamp" || strings.Contains(l, " ") {
				t.Errorf("-o json sample is not one compact object with the SDK keys: %q", l)
			}
		}
	})
}

// A stream in every framing execd and proxies use, with an error line in
// the middle, rendered in each format; the stream's end ends the watch.
func TestMetricsWatchFraming(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, "sbx-1")
	fs.watchLines = []string{
		`{"cpu_count":2,"cpu_used_pct":12.5,"mem_total_mib":1024,"mem_used_mib":256.25,"timestamp":1767225600000}`,
		`: keep-alive`,
		`data: {"error":"cannot read /proc/stat"}`,
		``,
		`event: metrics`,
		`id: 7`,
		`data: {"cpu_count":4,"cpu_used_percentage":50,"memory_total_in_mib":2048,"memory_used_in_mib":1024.5,"timestamp":1767225601123}`,
	}
	env := fs.env(t)
	for _, format := range []string{"raw", "json", "yaml"} {
		golden(t, "metrics_watch_"+format, env.Run("sandbox", "metrics", "sbx-1", "--watch", "-o", format).ExpectCode(t, 0))
	}
	// Sample times are RFC 3339 UTC, to the millisecond.
	r := env.Run("sandbox", "metrics", "sbx-1", "--watch")
	if !strings.HasPrefix(r.Stdout, "[2026-01-01T00:00:00.000Z] cpu=12.50% cores=2 ") || !strings.Contains(r.Stdout, "\n[2026-01-01T00:00:01.123Z] ") {
		t.Errorf("sample times: %q", r.Stdout)
	}
	fs.watchLines = []string{`{"cpu_count":2,"cpu_used_pct":1,"mem_total_mib":1,"mem_used_mib":1,"timestamp":1}`, `<html>`}
	r = env.Run("sandbox", "metrics", "sbx-1", "--watch")
	if r.Code != 1 || !strings.Contains(r.Stderr, "metrics stream sent a line that is not a JSON object") || strings.Count(r.Stdout, "\n") != 1 {
		t.Errorf("a broken line: exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// The four figures are floats in the official model, so they print as
// Python prints a float whatever the server wrote: 2 and 2.0 are 2.0,
// 12.50 is 12.5, 1e3 is 1000.0; in json and in yaml.
func TestMetricsNumbersAsTheOfficialClient(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, "sbx-1")
	fs.watchLines = []string{`{"cpu_count":2,"cpu_used_pct":12.50,"mem_total_mib":1024,"mem_used_mib":1e3,"timestamp":1767225600000}`,
		`{"cpu_count":2.0,"cpu_used_pct":1e-5,"mem_total_mib":1e16,"mem_used_mib":0,"timestamp":1767225600001}`}
	env := fs.env(t)
	want := `{"cpu_count":2.0,"cpu_used_percentage":12.5,"memory_total_in_mib":1024.0,"memory_used_in_mib":1000.0,"timestamp":1767225600000}` + "\n" +
		`{"cpu_count":2.0,"cpu_used_percentage":1e-05,"memory_total_in_mib":1e+16,"memory_used_in_mib":0.0,"timestamp":1767225600001}` + "\n"
	if r := env.Run("sandbox", "metrics", "sbx-1", "--watch", "-o", "json"); r.Code != 0 || r.Stdout != want {
		t.Errorf("json: exit %d\n%s\nwant\n%s", r.Code, r.Stdout, want)
	}
	wantYAML := "---\ncpu_count: 2.0\ncpu_used_percentage: 12.5\nmemory_total_in_mib: 1024.0\nmemory_used_in_mib: 1000.0\ntimestamp: 1767225600000\n" +
		"---\ncpu_count: 2.0\ncpu_used_percentage: 1e-05\nmemory_total_in_mib: 1e+16\nmemory_used_in_mib: 0.0\ntimestamp: 1767225600001\n"
	if r := env.Run("sandbox", "metrics", "sbx-1", "--watch", "-o", "yaml"); r.Code != 0 || r.Stdout != wantYAML {
		t.Errorf("yaml: exit %d\n%s\nwant\n%s", r.Code, r.Stdout, wantYAML)
	}
}

// Against osb server, whose execd writes the cpu count as an integer.
func TestMetricsCPUCountIsAFloat(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	id := env.NewSandbox()
	out := env.Must("sandbox", "metrics", id, "-o", "json")
	if !regexp.MustCompile(`(?m)^  "cpu_count": [1-9][0-9]*\.0,$`).MatchString(out) {
		t.Errorf("metrics -o json:\n%s", out)
	}
	if out := env.Must("sandbox", "metrics", id, "-q", "cpu_count"); !regexp.MustCompile(`^[1-9][0-9]*\.0\n$`).MatchString(out) {
		t.Errorf("metrics -q cpu_count: %q", out)
	}
}
