package commands_test

import (
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// An empty sandbox id is refused before any request, whatever the command.
func TestEmptySandboxIDSendsNothing(t *testing.T) {
	e := cmdtest.New(t)
	for _, args := range [][]string{
		{"sandbox", "get", ""},
		{"sandbox", "kill", " "},
		{"command", "run", "", "--", "true"},
		{"file", "cat", "", "/workspace/x"},
		{"egress", "get", ""},
	} {
		r := e.Run(append([]string{"-v"}, args...)...)
		if r.Code != 2 || r.Stdout != "" || r.Stderr != "Error: the sandbox id must not be empty\n" {
			t.Errorf("osb %s: exit %d stdout %q stderr %q", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
}
