package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type endpointOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Port    int
}

func newCmdEndpoint(f *cmdutil.Factory) *cobra.Command {
	opts := &endpointOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[endpointOptions]{
		Name:  "endpoint",
		Short: "Show where a port of a sandbox can be reached.",
		Long: "Show the address of a sandbox port (host:port, maybe with a path, no scheme)\n" +
			"and the headers every request to it must carry. --use-server-proxy asks for\n" +
			"the route through the lifecycle server.",
		Example: "  osb sandbox endpoint sbx-123 -p 8080",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.IntVarP(&opts.Port, "port", "p", 0, "Port inside the sandbox, 1-65535 (required).")
			fs.Required("port")
		},
		Run: runEndpoint,
	})
}

func runEndpoint(ctx context.Context, opts *endpointOptions) error {
	if opts.Port < 1 || opts.Port > 65535 {
		return ops.UsageErrorf("--port must be between 1 and 65535, got %d", opts.Port)
	}
	var ep *client.Endpoint
	err := opts.Sandbox.Do(ctx, func(c *client.Client, id string) error {
		var err error
		ep, err = c.GetEndpoint(ctx, id, opts.Port)
		return err
	})
	if err != nil {
		return err
	}
	return opts.Printer().Object("Sandbox Endpoint", ops.NewEndpointView(ep))
}
