package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type endpointOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Port      int
	Format    string
}

func newCmdEndpoint(f *cmdutil.Factory, runF func(context.Context, *endpointOptions) error) *cobra.Command {
	opts := &endpointOptions{f: f}
	cmd := &cobra.Command{
		Use:   "endpoint SANDBOX_ID",
		Short: "Show where a port of a sandbox can be reached.",
		Long: "Show the address of a sandbox port (host:port, maybe with a path, no scheme)\n" +
			"and the headers every request to it must carry. --use-server-proxy asks for\n" +
			"the route through the lifecycle server.",
		Example:           "  osb sandbox endpoint sbx-123 -p 8080",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if opts.Port < 1 || opts.Port > 65535 {
				return cmdutil.UsageErrorf("--port must be between 1 and 65535, got %d", opts.Port)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runEndpoint(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Port, "port", "p", 0, "Port inside the sandbox, 1-65535 (required).")
	_ = cmd.MarkFlagRequired("port")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runEndpoint(ctx context.Context, opts *endpointOptions) error {
	var ep *client.Endpoint
	err := opts.f.WithSandbox(ctx, opts.SandboxID, func(c *client.Client, id string) error {
		var err error
		ep, err = c.GetEndpoint(ctx, id, opts.Port)
		return err
	})
	if err != nil {
		return err
	}
	var origin any
	if ep.Origin != "" {
		origin = ep.Origin
	}
	return opts.f.Printer(opts.Format).Object("Sandbox Endpoint", output.Obj{
		{Key: "endpoint", Value: ep.Endpoint},
		{Key: "headers", Value: ep.Headers},
		{Key: "origin", Value: origin},
	})
}
