package devops

import (
	"context"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type summaryOptions struct {
	textOptions
	Tail       int
	EventLimit int
}

func newCmdSummary(f *cmdutil.Factory) *cobra.Command {
	opts := &summaryOptions{}
	return cmdutil.NewVerb(f, opts, textVerb("summary", "Print inspection, recent events and recent logs of a sandbox in one go.", &opts.Sandbox,
		func(fs *cmdutil.FlagSet) {
			fs.IntVarP(&opts.Tail, "tail", "n", 50, "Number of trailing log lines.")
			fs.IntVar(&opts.EventLimit, "event-limit", 20, "Maximum number of events.")
		},
		runSummary))
}

func runSummary(ctx context.Context, opts *summaryOptions) error {
	if err := positive("tail", opts.Tail); err != nil {
		return err
	}
	if err := positive("event-limit", opts.EventLimit); err != nil {
		return err
	}
	q := url.Values{"tail": {strconv.Itoa(opts.Tail)}, "event_limit": {strconv.Itoa(opts.EventLimit)}}
	return printText(ctx, &opts.textOptions, "summary", q)
}
