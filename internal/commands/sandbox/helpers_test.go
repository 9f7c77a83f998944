package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
)

// newEnv starts a local server whose sandboxes run without namespaces:
// faster, and the status message is the same on every machine.
func newEnv(t *testing.T) *cmdtest.Env {
	t.Helper()
	return cmdtest.New(t, func(o *server.Options) { o.NoIsolation = true })
}

// create makes a sandbox through the CLI and returns its id.
func create(t *testing.T, env *cmdtest.Env, args ...string) string {
	t.Helper()
	out := env.Must(append([]string{"sandbox", "create", "-i", "python:3.11", "-o", "json"}, args...)...)
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == "" {
		t.Fatalf("create printed no id: %v\n%s", err, out)
	}
	return v.ID
}

// sandboxIDs asks the server directly (not through osb) which sandboxes exist.
func sandboxIDs(t *testing.T, env *cmdtest.Env) []string {
	t.Helper()
	var list struct{ Items []struct{ ID string } }
	env.APIGet("/sandboxes?pageSize=200", &list)
	ids := make([]string, len(list.Items))
	for i, it := range list.Items {
		ids[i] = it.ID
	}
	return ids
}

// expectSandboxes fails unless the server holds exactly n sandboxes.
func expectSandboxes(t *testing.T, env *cmdtest.Env, n int) {
	t.Helper()
	if ids := sandboxIDs(t, env); len(ids) != n {
		t.Fatalf("server holds %d sandboxes %v, want %d", len(ids), ids, n)
	}
}

var addrRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// norm replaces ids by <ID1>, <ID2>…, addresses by <ADDR> and times by
// <TIME>, then squeezes table columns (their widths follow the values
// replaced).
func norm(s string, ids ...string) string {
	m := map[string]string{}
	for i, id := range ids {
		m[id] = fmt.Sprintf("<ID%d>", i+1)
	}
	return cmdtest.Squeeze(addrRE.ReplaceAllString(cmdtest.Normalize(s, m), "<ADDR>"))
}

// golden compares stdout (and stderr, when any) with a golden file.
func golden(t *testing.T, name string, r cmdtest.Result, ids ...string) {
	t.Helper()
	cmdtest.Golden(t, name, norm(r.Combined(), ids...))
}

// writeFile writes content into a fresh temp dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeConfig writes the osb config file of env.
func writeConfig(t *testing.T, env *cmdtest.Env, toml string) {
	t.Helper()
	dir := filepath.Join(env.Home, ".opensandbox")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}
