package server

import (
	"net"
	"net/http"

	_ "github.com/osb-dev/osb/internal/server/agent" // lets this binary be a sandbox's agent
	"github.com/osb-dev/osb/internal/server/egress"
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

// startEgress opens the egress proxy inside an isolated sandbox's network
// (sandbox.EgressProxyAddr, where its HTTP(S)_PROXY points): its only way
// out, so the sidecar's policy is enforced from then on. A sandbox without
// a sidecar (template sandboxes) gets a listener that refuses everything.
func (s *Server) startEgress(rec *record) error {
	if !rec.sb.Isolated() {
		return nil
	}
	sc, ok := rec.data.ports[EgressPort].(*egress.Sidecar)
	if !ok {
		return rec.sb.ListenInside(sandbox.EgressProxyAddr, func(c net.Conn) { c.Close() })
	}
	p := sc.NewProxy(nil)
	if err := rec.sb.ListenInside(sandbox.EgressProxyAddr, p.ServeConn); err != nil {
		return err
	}
	go func() {
		<-rec.sb.Done()
		p.Close()
	}()
	sc.SetEnforcement(egress.ProxyEnforcement)
	return nil
}
