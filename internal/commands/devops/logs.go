package devops

import (
	"context"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type logsOptions struct {
	textOptions
	Tail  int
	Since string
}

func newCmdLogs(f *cmdutil.Factory) *cobra.Command {
	opts := &logsOptions{}
	return cmdutil.NewVerb(f, opts, textVerb("logs", "Deprecated: print a sandbox's last log lines; use 'osb diagnostics logs'.", &opts.Sandbox,
		func(fs *cmdutil.FlagSet) {
			fs.IntVarP(&opts.Tail, "tail", "n", 100, "Number of trailing log lines.")
			fs.StringVarP(&opts.Since, "since", "s", "", "Only logs newer than this duration, e.g. 10m or 1h.")
		},
		runLogs))
}

func runLogs(ctx context.Context, opts *logsOptions) error {
	deprecated(&opts.textOptions, "logs", "logs")
	if err := positive("tail", opts.Tail); err != nil {
		return err
	}
	q := url.Values{"tail": {strconv.Itoa(opts.Tail)}}
	if opts.Since != "" {
		q.Set("since", opts.Since)
	}
	return printText(ctx, &opts.textOptions, "logs", q)
}
