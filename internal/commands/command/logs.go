package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
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
			"output as it comes, each byte once, until the command ends, and then exits with\n" +
			"the command's exit code ('osb help exit-codes').",
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
		return ops.UsageErrorf("--follow prints raw output or json lines; it cannot be combined with -o yaml")
	}
	if opts.HasCursor && opts.Cursor < 0 {
		return ops.UsageErrorf("invalid value for '--cursor': %d is negative", opts.Cursor)
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
	logs, err := dp.CommandLogs(ctx, opts.ExecutionID, cursor)
	if err != nil {
		return err
	}
	defer logs.Body.Close()
	p := opts.Printer()
	switch opts.Format {
	case output.JSONF:
		return logsFailed(opts.ExecutionID, p.Document(logsView(output.Streamed(func(w io.Writer) error {
			_, err := io.Copy(w, logs.Body)
			return err
		}), logs.Cursor)))
	case output.YAMLF:
		content, err := io.ReadAll(io.LimitReader(logs.Body, client.MaxResponseBytes+1))
		if err != nil {
			return logsFailed(opts.ExecutionID, err)
		}
		if len(content) > client.MaxResponseBytes {
			return fmt.Errorf("the log of %s is larger than %d MiB: read it with -o raw or -o json, which print it as it comes", opts.ExecutionID, client.MaxResponseBytes>>20)
		}
		return p.Data(logsView(string(content), logs.Cursor))
	case output.Raw:
		// The official client ends the log with a newline, always.
		if _, err := copyLog(p.IO.Out, logs.Body); err != nil {
			return logsFailed(opts.ExecutionID, err)
		}
		_, err := io.WriteString(p.IO.Out, "\n")
		return err
	}
	io.WriteString(p.IO.Out, "--- Command Logs ---\n")
	last, err := copyLog(p.IO.Out, logs.Body)
	if err != nil {
		return logsFailed(opts.ExecutionID, err)
	}
	if last != 0 && last != '\n' {
		_, err = io.WriteString(p.IO.Out, "\n")
	}
	return err
}

// copyLog prints log bytes as they come and returns the last one (0 when
// there were none).
func copyLog(w io.Writer, body io.Reader) (last byte, err error) {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return last, err
			}
			last = buf[n-1]
		}
		if rerr == io.EOF {
			return last, nil
		}
		if rerr != nil {
			return last, rerr
		}
	}
}

// logsFailed explains a log read that broke off.
func logsFailed(id string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("reading the log of %s failed: %w", id, err)
}

// logsView is the official client's json/yaml shape for one read.
func logsView(content any, cursor *int64) output.Obj {
	var c any
	if cursor != nil {
		c = *cursor
	}
	return output.Obj{{Key: "content", Value: content}, {Key: "cursor", Value: c}}
}

// followLogs reads the log again and again from the cursor the server
// returned last time, printing only what is new, until the command has
// ended. The status is fetched before each read: once it says the command
// is over, that read has all the output there will be.
func followLogs(ctx context.Context, opts *logsOptions, dp *client.DataPlane, cursor *int64) error {
	ios := opts.IOStreams
	p := opts.Printer()
	var last byte
	var st *client.CommandStatus
	for {
		var err error
		st, err = dp.CommandStatus(ctx, opts.ExecutionID)
		if err != nil {
			return err
		}
		logs, err := dp.CommandLogs(ctx, opts.ExecutionID, cursor)
		if err != nil {
			return err
		}
		if logs.Cursor == nil {
			logs.Body.Close()
			return errors.New("cannot follow: the server sent no " + client.TailCursorHeader + " header")
		}
		cursor = logs.Cursor
		if opts.Format == output.JSONF {
			err = followJSON(p, logs)
		} else {
			var n byte
			n, err = copyLog(ios.Out, logs.Body)
			if n != 0 {
				last = n
			}
		}
		logs.Body.Close()
		if err != nil {
			return logsFailed(opts.ExecutionID, err)
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
	return jobExit(st)
}

// jobExit ends a follow with the command's own exit code, as a foreground
// run does, so that `osb command logs -f … && next` waits for a success:
// 0 for a success, the code for a failure (1 for one no shell can show).
func jobExit(st *client.CommandStatus) error {
	if st == nil || st.ExitCode == nil || *st.ExitCode == 0 {
		return nil
	}
	code := *st.ExitCode
	if code < 1 || code > 255 {
		code = ops.ExitFailure
	}
	return ops.Silent(code)
}

// followJSON prints one read as one line of JSON, when it brought anything.
func followJSON(p *output.Printer, logs *client.Logs) error {
	var content bytes.Buffer
	if _, err := io.Copy(&content, io.LimitReader(logs.Body, client.MaxResponseBytes+1)); err != nil {
		return err
	}
	if content.Len() > client.MaxResponseBytes {
		return fmt.Errorf("one read of the log is larger than %d MiB; follow it with -o raw", client.MaxResponseBytes>>20)
	}
	if content.Len() == 0 {
		return nil
	}
	return p.Line(logsView(content.String(), logs.Cursor))
}
