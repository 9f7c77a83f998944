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

func newCmdSummary(f *cmdutil.Factory, runF func(context.Context, *summaryOptions) error) *cobra.Command {
	opts := &summaryOptions{textOptions: textOptions{f: f}}
	cmd := newTextCmd(&opts.textOptions, "summary SANDBOX_ID", "Print inspection, recent events and recent logs of a sandbox in one go.",
		func(ctx context.Context) error {
			if runF != nil {
				return runF(ctx, opts)
			}
			return runSummary(ctx, opts)
		})
	cmd.Flags().IntVarP(&opts.Tail, "tail", "n", 50, "Number of trailing log lines.")
	cmd.Flags().IntVar(&opts.EventLimit, "event-limit", 20, "Maximum number of events.")
	return cmd
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
