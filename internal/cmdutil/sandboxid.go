package cmdutil

import (
	"context"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// WithSandbox runs op with the client and the full id of the sandbox named
// by id or a unique prefix of it (see WithSandboxID).
func (f *Factory) WithSandbox(ctx context.Context, id string, op func(c *client.Client, id string) error) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	return ops.WithSandboxID(ctx, c, id, func(full string) error { return op(c, full) })
}
