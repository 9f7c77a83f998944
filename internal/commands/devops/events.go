package devops

import (
	"context"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type eventsOptions struct {
	textOptions
	Limit int
}

func newCmdEvents(f *cmdutil.Factory, runF func(context.Context, *eventsOptions) error) *cobra.Command {
	opts := &eventsOptions{textOptions: textOptions{f: f}}
	cmd := newTextCmd(&opts.textOptions, "events SANDBOX_ID", "Deprecated: print a sandbox's last events; use 'osb diagnostics events'.",
		func(ctx context.Context) error {
			if runF != nil {
				return runF(ctx, opts)
			}
			return runEvents(ctx, opts)
		})
	cmd.Flags().IntVarP(&opts.Limit, "limit", "l", 50, "Maximum number of events.")
	return cmd
}

func runEvents(ctx context.Context, opts *eventsOptions) error {
	deprecated(&opts.textOptions, "events", "events")
	if err := positive("limit", opts.Limit); err != nil {
		return err
	}
	return printText(ctx, &opts.textOptions, "events", url.Values{"limit": {strconv.Itoa(opts.Limit)}})
}
