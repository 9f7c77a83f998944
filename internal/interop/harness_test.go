package interop

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// dirEnv names the directory scripts/interop-setup installed the official
// clients into; `make interop` sets it.
const dirEnv = "OSB_INTEROP_DIR"

// clients are the installed official clients.
type clients struct {
	osb         string // the official CLI, from the virtualenv
	python      string // the virtualenv's python, which imports the official SDK
	node        string
	nodeModules string // holds @alibaba-group/opensandbox
}

// installed finds the official clients, or skips the test when the suite was
// not asked for. Once asked for, anything missing is a failure.
func installed(t *testing.T) clients {
	t.Helper()
	dir := os.Getenv(dirEnv)
	if dir == "" {
		t.Skip("the official OpenSandbox clients are not installed here; `make interop` installs them and runs this suite")
	}
	c := clients{
		osb:         filepath.Join(dir, "venv", "bin", "osb"),
		python:      filepath.Join(dir, "venv", "bin", "python"),
		nodeModules: filepath.Join(dir, "node", "node_modules"),
	}
	for _, p := range []string{c.osb, c.python, filepath.Join(c.nodeModules, "@alibaba-group", "opensandbox", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s lacks an official client (%v); run scripts/interop-setup", dirEnv, dir, err)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s is set but node is not on PATH: %v", dirEnv, err)
	}
	c.node = node
	return c
}

// harness is one `osb server` with both CLIs pointed at it: the official one
// as a subprocess, ours in-process (cmdtest), each with its own empty HOME.
type harness struct {
	clients
	ours *cmdtest.Env
	home string              // the official clients' HOME
	log  *cmdtest.SyncBuffer // the server's log
	vars []string            // more environment for the clients
}

func start(t *testing.T) *harness {
	t.Helper()
	c := installed(t)
	t.Parallel()
	log := &cmdtest.SyncBuffer{}
	// With a spare sandbox made ahead of each create, as osb server runs.
	ours := cmdtest.New(t, func(o *server.Options) { o.Log, o.NoSpare = log, false })
	return &harness{clients: c, ours: ours, home: t.TempDir(), log: log}
}

// env is the whole environment of an official client process.
func (h *harness) env() []string {
	return append([]string{
		"HOME=" + h.home,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"OPEN_SANDBOX_DOMAIN=" + h.ours.Server.Addr(),
		"OPEN_SANDBOX_API_KEY=" + servertest.APIKey,
		"OSB_INTEROP_NODE_MODULES=" + h.nodeModules,
	}, h.vars...)
}

// run executes an official client with stdin, in dir ("" = HOME).
func (h *harness) run(t *testing.T, stdin, dir, name string, args ...string) cmdtest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = h.env()
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = h.home
	}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not finish within 3 minutes\nstderr: %s", filepath.Base(name), strings.Join(args, " "), stderr.String())
	}
	return cmdtest.Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// official runs the official CLI.
func (h *harness) official(t *testing.T, args ...string) cmdtest.Result {
	t.Helper()
	return h.run(t, "", "", h.osb, args...)
}

// officialOK runs the official CLI and fails the test unless it succeeded:
// a failure of the official client against our server is a server bug.
func (h *harness) officialOK(t *testing.T, args ...string) string {
	t.Helper()
	r := h.official(t, args...)
	if r.Code != 0 {
		t.Fatalf("official osb %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// sandbox creates a sandbox through our server's API (not through a client
// under test) and returns its id; body adds fields to a minimal request, or
// takes them out with nil.
func (h *harness) sandbox(t *testing.T, body map[string]any) string {
	t.Helper()
	req := map[string]any{
		"image":          map[string]string{"uri": "python:3.11"},
		"entrypoint":     []string{"tail", "-f", "/dev/null"},
		"resourceLimits": map[string]string{"cpu": "1", "memory": "2Gi"},
		"timeout":        600,
	}
	for k, v := range body {
		req[k] = v
		if v == nil {
			delete(req, k)
		}
	}
	status, out := h.ours.API("POST", "/sandboxes", req)
	if status != 202 {
		t.Fatalf("create sandbox: %d %s", status, out)
	}
	var v struct{ ID string }
	decodeInto(t, out, &v)
	return v.ID
}

// twins creates two sandboxes from the same request: one for each CLI, so
// that a command that changes state runs once through each.
func (h *harness) twins(t *testing.T, body map[string]any) twin {
	t.Helper()
	return twin{h.sandbox(t, body), h.sandbox(t, body)}
}

// twin is a pair of like objects, the first for the official CLI, the second
// for ours.
type twin [2]string

// The suite runs the pinned versions (scripts/interop/), and each client
// starts at all.
func TestOfficialClientVersions(t *testing.T) {
	h := start(t)
	if got := h.officialOK(t, "--version"); got != "opensandbox, version 1.1.1\n" {
		t.Errorf("official CLI: %q", got)
	}
	r := h.run(t, "", "", h.python, "-c", `import importlib.metadata as m, opensandbox; print(m.version("opensandbox"))`)
	if r.Code != 0 || r.Stdout != "1.1.1\n" {
		t.Errorf("Python SDK: exit %d, %q %s", r.Code, r.Stdout, r.Stderr)
	}
	r = h.run(t, "", "", h.node, "--input-type=module", "-e", `
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const require = createRequire(process.env.OSB_INTEROP_NODE_MODULES + "/");
await import(require.resolve("@alibaba-group/opensandbox"));
const pkg = process.env.OSB_INTEROP_NODE_MODULES + "/@alibaba-group/opensandbox/package.json";
console.log(JSON.parse(readFileSync(pkg, "utf8")).version);`)
	if r.Code != 0 || r.Stdout != "0.1.11\n" {
		t.Errorf("JavaScript SDK: exit %d, %q %s", r.Code, r.Stdout, r.Stderr)
	}
}
