package sandbox_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// newEnv starts a local server whose sandboxes run without namespaces:
// faster, and the status message is the same on every machine.
func newEnv(t *testing.T) *cmdtest.Env {
	t.Helper()
	return cmdtest.New(t, servertest.NoIsolation)
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

var (
	addrRE   = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	secretRE = regexp.MustCompile(`\b[0-9a-f]{64}\b`) // an endpoint's OpenSandbox-Secure-Access value
)

// norm replaces ids by <ID1>, <ID2>…, addresses by <ADDR>, sandbox
// secrets by <SECRET> and times by <TIME>, then squeezes table columns (their widths follow the values
// replaced).
func norm(s string, ids ...string) string {
	m := map[string]string{}
	for i, id := range ids {
		m[id] = fmt.Sprintf("<ID%d>", i+1)
	}
	s = secretRE.ReplaceAllString(addrRE.ReplaceAllString(cmdtest.Normalize(s, m), "<ADDR>"), "<SECRET>")
	return cmdtest.Squeeze(s)
}

// golden compares stdout (and stderr, when any) with a golden file.
func golden(t *testing.T, name string, r cmdtest.Result, ids ...string) {
	t.Helper()
	cmdtest.Golden(t, name, norm(r.Combined(), ids...))
}
