// Package servertest starts a local osb server for tests. Sandboxes are
// isolated with util-linux unshare/nsenter where the machine allows it, so
// test binaries need no TestMain hook.
package servertest

import (
	"cmp"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/server"
)

// APIKey is the key every server started by Start requires.
const APIKey = "test-key"

// Start runs a server on 127.0.0.1:0 with APIKey and a fresh data dir; opts
// adjust the Options. Close (which kills every sandbox) runs at cleanup.
func Start(t testing.TB, opts ...func(*server.Options)) *server.Server {
	t.Helper()
	o := server.Options{Listen: "127.0.0.1:0", APIKey: APIKey, DataDir: t.TempDir()}
	for _, f := range opts {
		f(&o)
	}
	s, err := server.New(o)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("servertest: close: %v", err)
		}
	})
	return s
}

// NoIsolation is an option for Start (and cmdtest.New) that runs sandboxes
// without namespaces: faster, and status messages are the same on every
// machine.
func NoIsolation(o *server.Options) { o.NoIsolation = true }

// Nulls lists where a JSON document holds null, as paths like
// "items[0].platform"; nil when it holds none or is not JSON. The upstream
// server leaves unset optional fields out of its answers, and generated
// clients crash on a null where they expect a value, so the tests check
// every answer with it. The one null upstream does send is left out: the
// input FastAPI echoes in each detail of a 422, which is the client's own
// value (null when the client sent null).
func Nulls(doc []byte) []string {
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
