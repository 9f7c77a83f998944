package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
)

// Typed at a terminal, `osb mcp` says what it is for, on stderr; stdout
// stays the protocol's. It ends when its input does.
func TestServeAtATerminal(t *testing.T) {
	env := cmdtest.New(t)
	ios, _, stdout, stderr := iostreams.Test()
	ios.SetTTY(true, true, true)
	code := commands.Run(context.Background(), env.Factory(ios), []string{"mcp"})
	if code != 0 || stdout.String() != "" || !strings.HasPrefix(stderr.String(), "osb mcp speaks MCP on stdin and stdout") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
