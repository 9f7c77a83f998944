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

func newCmdEvents(f *cmdutil.Factory) *cobra.Command {
	opts := &eventsOptions{}
	return cmdutil.NewVerb(f, opts, textVerb("events", "Deprecated: print a sandbox's last events; use 'osb diagnostics events'.", &opts.Sandbox,
		func(fs *cmdutil.FlagSet) { fs.IntVarP(&opts.Limit, "limit", "l", 50, "Maximum number of events.") },
		runEvents))
}

func runEvents(ctx context.Context, opts *eventsOptions) error {
	deprecated(&opts.textOptions, "events", "events")
	if err := positive("limit", opts.Limit); err != nil {
		return err
	}
	return printText(ctx, &opts.textOptions, "events", url.Values{"limit": {strconv.Itoa(opts.Limit)}})
}
