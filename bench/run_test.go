//go:build linux

// Package bench_test checks bench/run itself, on rows that time nothing
// worth reading: a failed row is listed with its reason, its teardown
// still runs, and the rows after it are still measured. It never measures
// osb (that is bench/run's job, outside the tests).
package bench_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunReportsAFailedRowAndGoesOn(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("bench/run needs curl")
	}
	dir := t.TempDir()
	osb := filepath.Join(dir, "osb")
	// The flags of make build, as cmdtest.BuildOsb builds osb for other
	// packages' tests: the compiled packages in Go's cache serve both.
	build := exec.Command("go", "build", "-trimpath", "-o", osb, "../cmd/osb")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rows := filepath.Join(dir, "rows")
	mark := filepath.Join(dir, "torn-down")
	write(t, rows, "a-fails.sh", `title='fails on its second run'
baseline='true'
runs=2 warmup=0
setup() { echo 0 >"$work/count"; }
run_osb() {
	n=$(($(cat "$work/count") + 1)); echo $n >"$work/count"
	[ $n -lt 2 ] || { echo "run $n broke" >&2; exit 3; }
}
run_baseline() { true; }
teardown() { touch `+mark+`; }
`)
	write(t, rows, "b-setup.sh", `title='setup fails'
baseline='true'
setup() { echo "no sandbox today"; false; echo "not reached"; }
run_osb() { true; }
run_baseline() { true; }
`)
	write(t, rows, "c-works.sh", `title='osb --version'
baseline='curl --version'
runs=2
bytes=1000000
run_osb() { "$osb" --version; }
run_baseline() { curl --version; }
note() { echo "a note"; }
`)
	server := filepath.Join(dir, "server.sh")
	write(t, dir, "server.sh", "#!/bin/sh\nprintf 'create p50\\t4.0\\t3.0\\t1.33\\tms\\tnote\\n'\necho 'bench: the server figures need root' >&2\nexit 1\n")
	if err := os.Chmod(server, 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.md")
	run := exec.Command("./run")
	run.Env = append(os.Environ(), "OSB="+osb, "BENCH_ROWS="+rows, "BENCH_RESULTS="+results, "BENCH_SERVER="+server)
	out, err := run.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("bench/run: %v, want exit status 1\n%s", err, out)
	}
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatalf("%v; bench/run said:\n%s", err, out)
	}
	got := string(b)
	for _, want := range []string{
		"at commit ",
		"| osb --version | curl --version | ",
		" MB/s; a note |",
		"## Failed rows",
		"- `a-fails`: osb side, run 2: exit status 3: run 2 broke",
		"- `b-setup`: setup failed (log: no sandbox today ",
		"- server (`" + server + "`): bench: the server figures need root",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("results.md lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| fails on its second run |") || strings.Contains(got, "not reached") || strings.Contains(got, "| create p50 |") {
		t.Errorf("a failed row or server section has figures, or its setup went on past the failure:\n%s", got)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the failed row's teardown did not run: %v", err)
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
