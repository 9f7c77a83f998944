// Package devops implements the experimental `osb devops` commands: the
// legacy plain-text diagnostics routes (logs, inspect, events, summary).
package devops

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

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
		newCmdLogs(f),
		newCmdInspect(f),
		newCmdEvents(f),
		newCmdSummary(f),
	)
	return cmd
}

// textOptions is what every devops command has.
type textOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
}

// textVerb declares a devops command: SANDBOX_ID, the text as it is (-o raw).
func textVerb[O any](name, short string, sb *cmdutil.Sandbox, flags func(*cmdutil.FlagSet), run func(context.Context, *O) error) cmdutil.Verb[O] {
	return cmdutil.Verb[O]{
		Name:    name,
		Short:   short,
		Long:    short + " SANDBOX_ID may be any unique prefix of the id.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(sb)},
		Formats: cmdutil.RawOnly,
		Flags:   flags,
		Run:     run,
	}
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
