package cmdutil

import (
	"context"

	"github.com/osb-dev/osb/internal/client"
)

// Egress connects to a sandbox's egress API (accepting a unique id prefix):
// its sidecar, or the lifecycle server for a sandbox made from a template.
func (f *Factory) Egress(ctx context.Context, sandboxID string) (*client.Egress, error) {
	var e *client.Egress
	err := f.WithSandbox(ctx, sandboxID, func(c *client.Client, id string) error {
		var err error
		e, err = c.Egress(ctx, id)
		return err
	})
	return e, err
}
