package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

func commandTools() []toolSpec {
	return []toolSpec{
		{name: "command_run", destructive: true, add: handler((*Server).runCommand),
			desc: "Run shell text (pipes and redirections work) in a sandbox and wait for it to end; returns " +
				"its execution id, exit_code, and its output in logs: stdout and stderr each a list of messages, " +
				"one per line printed (an empty line is \"\\n\"). Output beyond the server's output budget is " +
				"cut from the start and truncated says so. With background true it returns as soon as the " +
				"command started. Clients that send a progress token get the newest output line as progress " +
				"while it runs."},
		{name: "command_interrupt", destructive: true, add: handler((*Server).interruptCommand),
			desc: "Stop a running command by its execution id."},
	}
}

type runArgs struct {
	target
	Command          string  `json:"command" jsonschema:"Shell text to run, e.g. \"cd /workspace && make test\"."`
	Background       bool    `json:"background,omitempty" jsonschema:"Return as soon as the command started, with its execution id."`
	WorkingDirectory *string `json:"working_directory,omitempty" jsonschema:"Directory to run the command in."`
}

// execution is the official SDK's Execution: what a command run returned.
type execution struct {
	ID             *string           `json:"id"`
	ExecutionCount *int              `json:"execution_count"`
	Result         []executionResult `json:"result"`
	Error          *executionError   `json:"error"`
	Logs           executionLogs     `json:"logs"`
	ExitCode       *int              `json:"exit_code"`
	Complete       *executionEnd     `json:"complete"`
	Truncated      *truncation       `json:"truncated,omitempty"`
}

type executionResult struct {
	Text      *string `json:"text"`
	Timestamp int64   `json:"timestamp"`
}

type executionError struct {
	Name      string   `json:"name"`
	Value     string   `json:"value"`
	Timestamp int64    `json:"timestamp"`
	Traceback []string `json:"traceback"`
}

type executionLogs struct {
	Stdout []outputMessage `json:"stdout"`
	Stderr []outputMessage `json:"stderr"`
}

type outputMessage struct {
	Text      string `json:"text"`
	Timestamp int64  `json:"timestamp"`
	IsError   bool   `json:"is_error"`
}

type executionEnd struct {
	Timestamp             int64 `json:"timestamp"`
	ExecutionTimeInMillis int64 `json:"execution_time_in_millis"`
}

func (s *Server) runCommand(ctx context.Context, req *mcp.CallToolRequest, a runArgs) (*execution, error) {
	if strings.TrimSpace(a.Command) == "" {
		return nil, usage("command must not be empty")
	}
	dp, err := s.execd(ctx, a.target)
	if err != nil {
		return nil, err
	}
	r := &client.RunCommandRequest{Command: a.Command, Background: a.Background}
	if a.WorkingDirectory != nil {
		r.Cwd = *a.WorkingDirectory
	}
	run := &commandRun{background: a.Background, progress: newProgress(req), out: newOutputTail(s.serverBudget()), readOn: s.readOnCommand()}
	return run.run(ctx, dp, r)
}

// readOnCommand says, in a note, how to get all of a command's output.
func (s *Server) readOnCommand() string {
	how := "To read all of it, send the output to a file (add > /tmp/out.log 2>&1 to the command) and read " +
		"that with file_read, range_header for each part"
	if s.serves("command_logs") {
		how += ", or run the command with background true and read its output with command_logs, cursor by cursor"
	}
	return how + "."
}

// Progress during a run: the newest output line at most every
// progressEvery, and a word that the command still runs after
// progressQuiet without output.
const (
	progressEvery = 250 * time.Millisecond
	progressQuiet = 5 * time.Second
	// interruptWait bounds stopping the remote command of a cancelled call.
	interruptWait = 5 * time.Second
)

// commandRun keeps one command run's output (ops.CommandRun) as the
// official SDK's Execution, and reports its progress.
type commandRun struct {
	ops.Unbuffered
	ctx        context.Context // the call's, for progress notifications
	background bool
	progress   *progress
	out        *outputTail
	readOn     string // how to read what out left out
	started    time.Time

	mu         sync.Mutex // output arrives on the stream's reader, ticks on the run
	pending    string     // newest output line not reported yet
	lastReport time.Time
}

func (r *commandRun) run(ctx context.Context, dp *client.DataPlane, req *client.RunCommandRequest) (*execution, error) {
	r.ctx, r.started, r.lastReport = ctx, time.Now(), time.Now()
	run := ops.CommandRun{Output: r, Whole: true, Grace: interruptWait,
		Open: func(ctx context.Context) (*client.EventStream, error) { return dp.RunCommand(ctx, req) }}
	if !r.background {
		run.Stop = dp.InterruptCommand
	}
	if r.progress.enabled() {
		run.Tick, run.TickEvery = r.report, progressEvery
	}
	end, err := run.Run(ctx)
	switch {
	case errors.Is(err, io.EOF) && r.background && end.ID != "":
	case errors.Is(err, io.EOF):
		return nil, errors.New("the server closed the stream before the command finished")
	case err != nil:
		return nil, err
	}
	ex := newExecution(end, r.out, r.readOn)
	if end.Last != nil && !r.background {
		if code, ok := end.Last.ExitCode(); ok {
			ex.ExitCode = &code
		}
	}
	return ex, nil
}

// newExecution is the Execution of a command or code run that ended: its
// id, its terminal event (its error, or its completion) and the output
// out kept; readOn says how to read what out left out.
func newExecution(end *ops.CommandEnd, out *outputTail, readOn string) *execution {
	ex := &execution{Result: []executionResult{}, Logs: out.logs(), Truncated: out.truncation(readOn)}
	if end.ID != "" {
		ex.ID = &end.ID
	}
	switch ev := end.Last; {
	case ev == nil:
	case ev.Type != client.EventComplete:
		e := ev.Error
		ex.Error = &executionError{Name: e.Name, Value: e.Value, Timestamp: ev.Timestamp, Traceback: append([]string{}, e.Traceback...)}
	default:
		ex.Complete = &executionEnd{Timestamp: ev.Timestamp}
		if ev.ExecutionTime != nil {
			ex.Complete.ExecutionTimeInMillis = *ev.ExecutionTime
		}
	}
	return ex
}

// Write keeps an output event as the official SDK does: one message, its
// text as sent.
func (r *commandRun) Write(ev *client.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	text := string(ev.Data)
	r.out.add(text, ev.Timestamp, ev.Type == client.EventStderr)
	if line := progressLine(text); line != "" {
		r.pending = line
	}
	if time.Since(r.lastReport) >= progressEvery {
		r.reportLocked()
	}
}

// report sends the newest output line, or after a quiet spell a word that
// the command still runs.
func (r *commandRun) report() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reportLocked()
}

func (r *commandRun) reportLocked() {
	switch {
	case r.pending != "":
		r.progress.report(r.ctx, r.pending)
	case time.Since(r.lastReport) >= progressQuiet:
		r.progress.report(r.ctx, fmt.Sprintf("still running after %s", time.Since(r.started).Round(time.Second)))
	default:
		return
	}
	r.pending, r.lastReport = "", time.Now()
}

// progressLine is an output line as a progress message: trimmed and
// shortened; "" for a blank line.
func progressLine(line string) string {
	line = strings.TrimRight(line, "\r\n")
	if i := strings.LastIndexAny(line, "\r\n"); i >= 0 {
		line = line[i+1:] // a server that sends several lines at once: the last
	}
	return cutText(strings.TrimSpace(line), 200)
}

type interruptArgs struct {
	target
	ExecutionID string `json:"execution_id" jsonschema:"The id command_run returned for the command."`
}

func (s *Server) interruptCommand(ctx context.Context, _ *mcp.CallToolRequest, a interruptArgs) (*status, error) {
	if a.ExecutionID == "" {
		return nil, usage("execution_id must not be empty")
	}
	return s.act(ctx, a.target, "interrupted", func(dp *client.DataPlane) error { return dp.InterruptCommand(ctx, a.ExecutionID) })
}
