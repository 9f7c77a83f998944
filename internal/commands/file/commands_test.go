package file_test

import (
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// TestCommandsSeeTheSameFiles: what `osb command run` writes, `osb file`
// reads, and the other way round. The sandbox is isolated where the
// machine allows it, so absolute /workspace paths are the sandbox's own;
// unisolated commands run on host paths, in the sandbox's workspace.
func TestCommandsSeeTheSameFiles(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	id := env.NewSandbox()
	target := "from-command"
	if env.Server.Isolated() {
		target = "/workspace/from-command"
	}
	env.Must("command", "run", id, "--", "sh", "-c", "echo x > "+target)
	if got := env.Must("file", "cat", id, "/workspace/from-command"); got != "x\n" {
		t.Errorf("file cat of a command's file: %q", got)
	}
	env.Must("file", "write", id, "/workspace/from-files", "-c", "written by osb file")
	if got := env.Must("command", "run", id, "--", "cat", "from-files"); got != "written by osb file\n" {
		t.Errorf("a command reading osb's file: %q", got)
	}
}
