package server

import (
	"net/http"

	_ "github.com/osb-dev/osb/internal/server/agent" // lets this binary be a sandbox's agent
	"github.com/osb-dev/osb/internal/server/execd"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// execdFor is a sandbox's execd: the agent running inside an isolated
// sandbox, reached through its unix socket, or else served here.
func execdFor(sb *sandbox.Sandbox) http.Handler {
	if sock := sb.AgentSocket(); sock != "" {
		return execd.Remote(sock, apiKeyHeader, SecureAccessHeader)
	}
	return execd.New(sb, execd.Options{})
}
