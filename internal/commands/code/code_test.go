package code_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
)

// needJupyter skips a test when sandboxes here have no Jupyter to run.
func needJupyter(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/opt/osb-jupyter/bin/jupyter-server"); err == nil {
		return
	}
	if _, err := exec.LookPath("jupyter-server"); err == nil {
		return
	}
	t.Skip("no Jupyter for sandboxes here; scripts/code-interpreter-setup installs it into /opt/osb-jupyter")
}

func expect(t *testing.T, r cmdtest.Result, code int, stdout, stderr string) {
	t.Helper()
	if r.Code != code || r.Stdout != stdout || r.Stderr != stderr {
		t.Errorf("got exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr, code, stdout, stderr)
	}
}

// warmUp starts the sandbox's Jupyter server with a run in the default
// context: a run's answer starts at once, while creating a context waits,
// within the request timeout, for the server a loaded machine is slow to
// start.
func warmUp(t *testing.T, env *cmdtest.Env, sb string) {
	t.Helper()
	expect(t, env.Run("code", "run", sb, "-c", "'warm'"), 0, "'warm'\n", "")
}

// TestCodeRunInput: bad input is a usage error, before any request.
func TestCodeRunInput(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	file := filepath.Join(t.TempDir(), "blank.py")
	os.WriteFile(file, []byte("\n  \n"), 0o600)
	// No sandbox of that id exists: a request would fail otherwise.
	expect(t, env.Run("code", "run", "nosuchsandbox"), 2, "", "Error: no code: give it with -c CODE, as a FILE, or - to read stdin\n")
	expect(t, env.Run("code", "run", "nosuchsandbox", "-c", "1", "x.py"), 2, "", "Error: give the code with -c or as FILE, not both\n")
	expect(t, env.Run("code", "run", "nosuchsandbox", file), 2, "", "Error: the code is empty\n")
	expect(t, env.RunStdin("", "code", "run", "nosuchsandbox", "-"), 2, "", "Error: the code is empty\n")
	expect(t, env.Run("code", "run", "nosuchsandbox", "/nonexistent/x.py"), 2, "", "Error: cannot read /nonexistent/x.py: no such file or directory\n")
	expect(t, env.Run("code", "run", "nosuchsandbox", "-c", "1", "-o", "table"), 2, "", "Error: invalid argument \"table\" for \"-o, --output\" flag: 'table' is not one of 'raw', 'json' (see 'osb code run --help')\n")
	expect(t, env.Run("code", "context", "delete", "nosuchsandbox"), 2, "", "Error: name the contexts to delete, or give --language to delete every context of a language\n")
	expect(t, env.Run("code", "context", "delete", "nosuchsandbox", "c1", "-l", "python"), 2, "", "Error: give context ids or --language, not both\n")
}

// TestCodeWithoutJupyter: a sandbox whose Jupyter is missing says so, and
// osb exits 125 (it could not run the code).
func TestCodeWithoutJupyter(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	sb := env.NewSandbox("--env", "OSB_JUPYTER=/nonexistent/jupyter-server")
	r := env.Run("code", "run", sb, "-c", "1")
	if r.Code != 125 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "Error: error running codes OSB_JUPYTER=/nonexistent/jupyter-server: fork/exec /nonexistent/jupyter-server: no such file or directory (HTTP 500") {
		t.Errorf("run: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	expect(t, env.Run("code", "context", "list", sb, "-o", "json"), 0, "[]\n", "")
}

func TestCodeRun(t *testing.T) {
	needJupyter(t)
	t.Parallel()
	env := cmdtest.New(t)
	sb := env.NewSandbox()
	warmUp(t, env, sb)
	r := env.Run("code", "context", "create", sb)
	m := regexp.MustCompile(`^--- Code Context Created ---\n  id: (\S+)\n  language: python\n$`).FindStringSubmatch(r.Stdout)
	if r.Code != 0 || m == nil {
		t.Fatalf("create: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	ctx := m[1]
	run := func(args ...string) []string { return append([]string{"code", "run", sb, "--context", ctx}, args...) }

	// State stays; output streams as written; a value prints as text.
	expect(t, env.Run(run("-c", "x = 41\nprint('hi')\nimport sys; print('oops', file=sys.stderr)")...), 0, "hi\n", "oops\n")
	expect(t, env.Run(run("-c", "x + 1")...), 0, "42\n", "")
	file := filepath.Join(t.TempDir(), "step.py")
	os.WriteFile(file, []byte("y = x * 2\ny\n"), 0o600)
	expect(t, env.Run(run(file)...), 0, "82\n", "")
	expect(t, env.RunStdin("print(x, y)\n", run("-")...), 0, "41 82\n", "")

	// An exception: its traceback (no colour off a terminal), exit 1.
	r = env.Run(run("-c", "print('before')\n1/0")...)
	if r.Code != 1 || r.Stdout != "before\n" || !strings.HasSuffix(r.Stderr, "ZeroDivisionError: division by zero\n") || strings.Contains(r.Stderr, "\x1b[") {
		t.Errorf("error: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	// -o json: the whole run, results as MIME bundles.
	r = env.Run(run("-c", "print('p')\nx", "-o", "json")...)
	var res map[string]any
	json.Unmarshal([]byte(r.Stdout), &res)
	if r.Code != 0 || res["context_id"] != ctx || res["stdout"] != "p\n" || res["error"] != nil ||
		len(res["results"].([]any)) != 1 || res["results"].([]any)[0].(map[string]any)["text"] != "41" || res["execution_count"] != 6.0 {
		t.Errorf("json: %d %s %q", r.Code, r.Stdout, r.Stderr)
	}
	expect(t, env.Run(run("-c", "1/0", "-o", "json", "-q", "error.name")...), 1, "ZeroDivisionError\n", "")

	// Without --context: the language's default context.
	expect(t, env.Run("code", "run", sb, "-c", "'default'"), 0, "'default'\n", "")
	r = env.Run("code", "context", "list", sb, "-l", "python", "-o", "json")
	var listed []map[string]string
	if json.Unmarshal([]byte(r.Stdout), &listed); r.Code != 0 || len(listed) != 2 {
		t.Errorf("list: %d %q", r.Code, r.Stdout)
	}
	r = env.Run("code", "context", "list", sb)
	if r.Code != 0 || !strings.Contains(r.Stdout, ctx) || !strings.Contains(r.Stdout, "python") {
		t.Errorf("list table: %d %q", r.Code, r.Stdout)
	}

	expect(t, env.Run("code", "context", "delete", sb, ctx), 0, "OK: Deleted context: "+ctx+"\n", "")
	r = env.Run(run("-c", "x")...)
	if r.Code != 4 || !strings.HasPrefix(r.Stderr, "Error: context "+ctx+" not found (HTTP 404") {
		t.Errorf("run in a deleted context: %d %q", r.Code, r.Stderr)
	}
	expect(t, env.Run("code", "context", "delete", sb, "-l", "python"), 0, "OK: Deleted every python context\n", "")
	expect(t, env.Run("code", "context", "list", sb, "-o", "json"), 0, "[]\n", "")
}

// TestCodeRunInterrupt: Ctrl-C interrupts the kernel; osb exits 130 and
// the context goes on.
func TestCodeRunInterrupt(t *testing.T) {
	needJupyter(t)
	t.Parallel()
	env := cmdtest.New(t)
	sb := env.NewSandbox()
	warmUp(t, env, sb)
	ctxID := strings.TrimSpace(env.Must("code", "context", "create", sb, "-o", "json", "-q", "id"))
	pr, pw := io.Pipe()
	ios, _, _, _ := iostreams.Test()
	stderr := &cmdtest.SyncBuffer{}
	ios.Out, ios.ErrOut = pw, stderr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- commands.Run(ctx, env.Factory(ios), []string{"code", "run", sb, "--context", ctxID, "-c", "import time\nprint('looping', flush=True)\nwhile True: time.sleep(0.05)"})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if line != "looping\n" {
		t.Fatalf("first line %q (%v); stderr %q", line, err, stderr.String())
	}
	cancel() // what Ctrl-C does
	go io.Copy(io.Discard, pr)
	select {
	case code := <-done:
		if code != 130 || !strings.Contains(stderr.String(), "KeyboardInterrupt") || !strings.HasSuffix(stderr.String(), "Interrupted.\n") {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the interrupted run did not end")
	}
	expect(t, env.Run("code", "run", sb, "--context", ctxID, "-c", "'still here'"), 0, "'still here'\n", "")
}
