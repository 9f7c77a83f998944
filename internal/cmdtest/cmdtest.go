// Package cmdtest runs osb command lines in-process against a real local
// server, and compares output with golden files.
package cmdtest

import (
	"bytes"
	"context"
	"flag"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Result is what one command line produced.
type Result struct {
	Stdout string
	Stderr string
	Code   int
}

// Env is a home directory and environment for running osb, usually pointed
// at a local server.
type Env struct {
	T      testing.TB
	Server *server.Server
	Home   string
	Vars   map[string]string
	// TTY makes stdout and stderr look like terminals.
	TTY bool
	// ClientOptions adjusts the HTTP client (e.g. a faster retry base).
	ClientOptions func(*client.Options)
	// CompletionBudget is how long Tab completion waits on the server:
	// a minute against a local server (a loaded machine must not cut its
	// listing short), osb's own 2 s when zero.
	CompletionBudget time.Duration
}

// New starts a local server and returns an environment pointed at it.
func New(t testing.TB, opts ...func(*server.Options)) *Env {
	t.Helper()
	srv := servertest.Start(t, opts...)
	e := Offline(t)
	e.Server = srv
	e.Vars["OPEN_SANDBOX_DOMAIN"] = srv.Addr()
	e.Vars["OPEN_SANDBOX_API_KEY"] = "test-key"
	e.CompletionBudget = time.Minute
	return e
}

// Offline returns an environment with an empty home and no server.
func Offline(t testing.TB) *Env {
	home := t.TempDir()
	return &Env{T: t, Home: home, Vars: map[string]string{"HOME": home}}
}

// ClosedAddr returns a loopback host:port that nothing listens on: a port
// that was free a moment ago, for a server that cannot be reached.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Run executes one command line and returns its output and exit code.
func (e *Env) Run(args ...string) Result {
	return e.RunStdin("", args...)
}

// RunStdin is Run with stdin holding input.
func (e *Env) RunStdin(input string, args ...string) Result {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return e.RunContext(ctx, strings.NewReader(input), args...)
}

// RunContext executes a command line with a context and stdin of the caller's choosing.
func (e *Env) RunContext(ctx context.Context, stdin *strings.Reader, args ...string) Result {
	ios, _, stdout, stderr := iostreams.Test()
	ios.In = stdin
	if e.TTY {
		ios.SetTTY(false, true, true)
	}
	code := commands.Run(ctx, e.Factory(ios), args)
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// Factory returns what commands.Run needs to run a command line in this
// environment with the given streams: tests that read the output while the
// command still runs bring their own writers.
func (e *Env) Factory(ios *iostreams.IOStreams) *cmdutil.Factory {
	f := cmdutil.New(ios, e.getenv)
	f.ClientOptions = e.ClientOptions
	f.CompletionBudget = e.CompletionBudget
	return f
}

func (e *Env) getenv(k string) string { return e.Vars[k] }

// Must fails the test unless the command exited 0, and returns its stdout.
func (e *Env) Must(args ...string) string {
	e.T.Helper()
	r := e.Run(args...)
	if r.Code != 0 {
		e.T.Fatalf("osb %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// ExpectCode fails the test unless the command exited with code.
func (r Result) ExpectCode(t testing.TB, code int) Result {
	t.Helper()
	if r.Code != code {
		t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.Code, code, r.Stdout, r.Stderr)
	}
	return r
}

var (
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`)
)

// Normalize replaces each given dynamic value (ids, ports) by its label and
// every timestamp by <TIME>, so golden files stay stable.
func Normalize(s string, replace map[string]string) string {
	// Longer values first, so an id is not half-replaced by its prefix.
	keys := slices.SortedFunc(maps.Keys(replace), func(a, b string) int { return len(b) - len(a) })
	for _, k := range keys {
		if k != "" {
			s = strings.ReplaceAll(s, k, replace[k])
		}
	}
	return timeRE.ReplaceAllString(s, "<TIME>")
}

var innerSpaces = regexp.MustCompile(`(\S)  +`)

// Squeeze shortens every run of two or more spaces after the start of a line
// to two, so a table whose cells were normalised to labels of another length
// still compares equal; column order and content are what is checked.
func Squeeze(s string) string {
	return innerSpaces.ReplaceAllString(s, "$1  ")
}

// Golden compares got with testdata/<name>.golden; -update rewrites the file.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file %s (run go test -update): %v", path, err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from its golden file\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
