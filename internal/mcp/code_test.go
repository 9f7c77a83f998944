package mcp_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	osbmcp "github.com/osb-dev/osb/internal/mcp"
)

func TestCodeRunTool(t *testing.T) {
	if _, err := os.Stat("/opt/osb-jupyter/bin/jupyter-server"); err != nil {
		if _, err := exec.LookPath("jupyter-server"); err != nil {
			t.Skip("no Jupyter for sandboxes here; scripts/code-interpreter-setup installs it into /opt/osb-jupyter")
		}
	}
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"default", "code_run"}})
	id := h.create(nil)
	first := h.ok("code_run", map[string]any{"sandbox_id": id, "code": "x = 41\nprint('set')"})
	ctx, _ := first["id"].(string)
	logs, _ := first["logs"].(map[string]any)
	// The kernel may send print's text and its newline as two stream
	// messages (it flushes on a timer): the output is what they add up to.
	stdout, _ := logs["stdout"].([]any)
	var text strings.Builder
	for _, m := range stdout {
		s, _ := m.(map[string]any)["text"].(string)
		text.WriteString(s)
	}
	if ctx == "" || first["error"] != nil || first["complete"] == nil || text.String() != "set\n" {
		t.Fatalf("first run: %v", first)
	}
	second := h.ok("code_run", map[string]any{"sandbox_id": id, "code": "x + 1", "context_id": ctx})
	results, _ := second["result"].([]any)
	if len(results) != 1 || results[0].(map[string]any)["text"] != "42" || second["execution_count"] != float64(2) {
		t.Errorf("second run: %v", second)
	}
	failed := h.ok("code_run", map[string]any{"sandbox_id": id, "code": "1/0", "context_id": ctx})
	if e, _ := failed["error"].(map[string]any); e["name"] != "ZeroDivisionError" || failed["complete"] != nil {
		t.Errorf("failing run: %v", failed)
	}
}
