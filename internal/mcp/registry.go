package mcp

import (
	"fmt"
	"sync"
)

// registry holds the ids of the sandboxes this server process created or
// connected to. Tools that reach into a sandbox act only on these, so an
// agent cannot wander into sandboxes it was never given. It lives as long
// as the process, shared by every client session, and is never persisted.
type registry struct {
	mu  sync.Mutex
	ids map[string]bool
}

func newRegistry() *registry { return &registry{ids: map[string]bool{}} }

func (r *registry) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids[id] = true
}

func (r *registry) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[id]
}

func (r *registry) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ids, id)
}

// notRegisteredError is a tool call on a sandbox this server does not know.
type notRegisteredError struct{ id string }

func (e *notRegisteredError) Error() string {
	return fmt.Sprintf("sandbox %q is not registered with this MCP server: create one with sandbox_create, "+
		"or attach to an existing one with sandbox_connect, then call this tool again "+
		"(or pass connect_if_missing: true to connect on the way)", e.id)
}
