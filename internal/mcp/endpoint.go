package mcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/ops"
)

func endpointTools() []toolSpec {
	return []toolSpec{{
		name: "sandbox_get_endpoint", readOnly: true, add: handler((*Server).endpoint),
		desc: "Get the address (host:port[/path], no scheme) where a port of the sandbox can be reached, " +
			"and the headers every request to it must carry.",
	}}
}

type endpointArgs struct {
	target
	Port int `json:"port" jsonschema:"Port inside the sandbox."`
}

func (s *Server) endpoint(ctx context.Context, _ *mcp.CallToolRequest, a endpointArgs) (*ops.EndpointView, error) {
	if a.Port < 1 || a.Port > 65535 {
		return nil, usage("port must be between 1 and 65535, got %d", a.Port)
	}
	id, err := s.admit(ctx, a.target)
	if err != nil {
		return nil, err
	}
	ep, err := s.c.GetEndpoint(ctx, id, a.Port)
	if err != nil {
		return nil, err
	}
	v := ops.NewEndpointView(ep)
	return &v, nil
}
