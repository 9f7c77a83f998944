// Package devops implements the experimental `osb devops` commands: the
// legacy plain-text diagnostics routes (logs, inspect, events, summary).
package devops

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

// NewCmdDevops returns the `devops` group.
func NewCmdDevops(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("devops", "Experimental diagnostics for sandbox troubleshooting.")
	cmd.Long = "Experimental diagnostics: the server's plain-text logs, inspection, events and\n" +
		"summary of a sandbox. 'logs' and 'events' are deprecated in favour of\n" +
		"'osb diagnostics logs' and 'osb diagnostics events'."
	cmd.AddCommand(
		textVerb(f, "logs", "Deprecated: print a sandbox's last log lines; use 'osb diagnostics logs'.",
			func(fs *cmdutil.FlagSet, opts *textOptions) {
				fs.IntVarP(&opts.Tail, "tail", "n", 100, "Number of trailing log lines.")
				fs.StringVarP(&opts.Since, "since", "s", "", "Only logs newer than this duration, e.g. 10m or 1h.")
			}, runLogs),
		textVerb(f, "inspect", "Print the server's detailed inspection of a sandbox.", nil,
			func(ctx context.Context, opts *textOptions) error { return printText(ctx, opts, "inspect", nil) }),
		textVerb(f, "events", "Deprecated: print a sandbox's last events; use 'osb diagnostics events'.",
			func(fs *cmdutil.FlagSet, opts *textOptions) {
				fs.IntVarP(&opts.Limit, "limit", "l", 50, "Maximum number of events.")
			},
			runEvents),
		textVerb(f, "summary", "Print inspection, recent events and recent logs of a sandbox in one go.",
			func(fs *cmdutil.FlagSet, opts *textOptions) {
				fs.IntVarP(&opts.Tail, "tail", "n", 50, "Number of trailing log lines.")
				fs.IntVar(&opts.EventLimit, "event-limit", 20, "Maximum number of events.")
			}, runSummary),
	)
	return cmd
}

// textOptions is what the devops commands have: the sandbox and the
// flags of each.
type textOptions struct {
	cmdutil.Base
	Sandbox    cmdutil.Sandbox
	Tail       int
	Since      string
	Limit      int
	EventLimit int
}

// textVerb declares a devops command: SANDBOX_ID, the text as it is (-o raw).
func textVerb(f *cmdutil.Factory, name, short string, flags func(*cmdutil.FlagSet, *textOptions), run func(context.Context, *textOptions) error) *cobra.Command {
	opts := &textOptions{}
	verb := cmdutil.Verb[textOptions]{
		Name:    name,
		Short:   short,
		Long:    short + " SANDBOX_ID may be any unique prefix of the id.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.RawOnly,
		Run:     run,
	}
	if flags != nil {
		verb.Flags = func(fs *cmdutil.FlagSet) { flags(fs, opts) }
	}
	return cmdutil.NewVerb(f, opts, verb)
}

func runLogs(ctx context.Context, opts *textOptions) error {
	deprecated(opts, "logs", "logs")
	if err := positive("tail", opts.Tail); err != nil {
		return err
	}
	q := url.Values{"tail": {strconv.Itoa(opts.Tail)}}
	if opts.Since != "" {
		q.Set("since", opts.Since)
	}
	return printText(ctx, opts, "logs", q)
}

func runEvents(ctx context.Context, opts *textOptions) error {
	deprecated(opts, "events", "events")
	if err := positive("limit", opts.Limit); err != nil {
		return err
	}
	return printText(ctx, opts, "events", url.Values{"limit": {strconv.Itoa(opts.Limit)}})
}

func runSummary(ctx context.Context, opts *textOptions) error {
	if err := positive("tail", opts.Tail); err != nil {
		return err
	}
	if err := positive("event-limit", opts.EventLimit); err != nil {
		return err
	}
	q := url.Values{"tail": {strconv.Itoa(opts.Tail)}, "event_limit": {strconv.Itoa(opts.EventLimit)}}
	return printText(ctx, opts, "summary", q)
}

// positive rejects a count flag below 1 before any request.
func positive(name string, n int) error {
	if n < 1 {
		return ops.UsageErrorf("--%s must be at least 1, got %d", name, n)
	}
	return nil
}

// printText streams a legacy diagnostics route to stdout, ending it with a
// newline when it lacks one. An unknown sandbox is exit 4.
func printText(ctx context.Context, opts *textOptions, route string, q url.Values) error {
	err := opts.Sandbox.Do(ctx, func(c *client.Client, id string) error {
		body, err := c.LegacyDiagnostic(ctx, id, route, q)
		if err != nil {
			return err
		}
		defer body.Close()
		return copyText(opts.IOStreams.Out, body)
	})
	if client.IsStatus(err, http.StatusNotFound) {
		return &ops.ExitError{Code: ops.ExitNotFound, Err: fmt.Errorf("Sandbox '%s' not found.", opts.Sandbox.ID)}
	}
	return err
}

func copyText(w io.Writer, r io.Reader) error {
	tw := &lastByteWriter{w: w}
	if _, err := io.Copy(tw, r); err != nil {
		return err
	}
	if tw.last != '\n' {
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}

// lastByteWriter remembers the last byte written through it.
type lastByteWriter struct {
	w    io.Writer
	last byte
}

func (l *lastByteWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

// deprecated warns on stderr that a command has a stable replacement.
func deprecated(opts *textOptions, old, replacement string) {
	opts.Printer().Warning(fmt.Sprintf("`osb devops %s` is deprecated. Use `osb diagnostics %s`.", old, replacement))
}
