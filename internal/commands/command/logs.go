package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type logsOptions struct {
	cmdutil.Base
	Sandbox     cmdutil.Sandbox
	ExecutionID string
	Cursor      int64
	HasCursor   bool
	Follow      bool
	Poll        time.Duration // --follow: time between two reads
}

func newCmdLogs(f *cmdutil.Factory) *cobra.Command {
	opts := &logsOptions{Poll: 500 * time.Millisecond}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[logsOptions]{
		Name:  "logs",
		Short: "Get background command logs.",
		Long: "Print the output (stdout and stderr merged) of a background command.\n\n" +
			"The server answers with the cursor to pass as --cursor next time to get only\n" +
			"newer output; json and yaml show it. --follow does that itself: it prints new\n" +
			"output as it comes, each byte once, until the command ends.",
		Example: "  osb command logs abc123 3f2a... --follow\n" +
			"  osb command logs abc123 3f2a... -o json --cursor 120",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("EXECUTION_ID", &opts.ExecutionID)},
		Formats: cmdutil.AllFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.Int64Var(&opts.Cursor, "cursor", 0, "Start from this cursor (from a previous read).")
			fs.Given("cursor", &opts.HasCursor)
			fs.BoolVarP(&opts.Follow, "follow", "f", false, "Keep printing new output until the command ends (json: one object per read).")
		},
		Run: runLogs,
	})
}

func runLogs(ctx context.Context, opts *logsOptions) error {
	if opts.Follow && opts.Format == output.YAMLF {
		return cmdutil.UsageErrorf("--follow prints raw output or json lines; it cannot be combined with -o yaml")
	}
	if opts.HasCursor && opts.Cursor < 0 {
		return cmdutil.UsageErrorf("invalid value for '--cursor': %d is negative", opts.Cursor)
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	var cursor *int64
	if opts.HasCursor {
		cursor = &opts.Cursor
	}
	if opts.Follow {
		return followLogs(ctx, opts, dp, cursor)
	}
	content, next, err := dp.CommandLogs(ctx, opts.ExecutionID, cursor)
	if err != nil {
		return err
	}
	p := opts.Printer()
	switch opts.Format {
	case output.JSONF, output.YAMLF:
		return p.Data(logsView{Content: string(content), Cursor: next})
	case output.Raw:
		_, err := fmt.Fprintf(p.IO.Out, "%s\n", content)
		return err
	}
	text := string(content)
	if text != "" && text[len(text)-1] != '\n' {
		text += "\n"
	}
	_, err = fmt.Fprintf(p.IO.Out, "--- Command Logs ---\n%s", text)
	return err
}

// logsView is the official client's json/yaml shape for one read.
type logsView struct {
	Content string `json:"content"`
	Cursor  *int64 `json:"cursor"`
}

// followLogs reads the log again and again from the cursor the server
// returned last time, printing only what is new, until the command has
// ended. The status is fetched before each read: once it says the command
// is over, that read has all the output there will be.
func followLogs(ctx context.Context, opts *logsOptions, dp *client.DataPlane, cursor *int64) error {
	ios := opts.IOStreams
	p := opts.Printer()
	var last byte
	for {
		st, err := dp.CommandStatus(ctx, opts.ExecutionID)
		if err != nil {
			return err
		}
		content, next, err := dp.CommandLogs(ctx, opts.ExecutionID, cursor)
		if err != nil {
			return err
		}
		if next == nil {
			return errors.New("cannot follow: the server sent no " + client.TailCursorHeader + " header")
		}
		cursor = next
		if len(content) > 0 {
			if opts.Format == output.JSONF {
				if err := p.Line(logsView{Content: string(content), Cursor: next}); err != nil {
					return err
				}
			} else {
				ios.Out.Write(content)
				last = content[len(content)-1]
			}
		}
		if !st.Running {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
	if last != 0 && last != '\n' {
		fmt.Fprintln(ios.Out)
	}
	return nil
}
