package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// ExitCodeError is how `osb code run` exits when the code raised an error
// (or its kernel died), as python exits when a script raises.
const ExitCodeError = 1

// interruptGrace is how long osb waits, once it asked the kernel to stop,
// for the run to end.
var interruptGrace = 10 * time.Second

type runOptions struct {
	cmdutil.Base
	Sandbox  cmdutil.Sandbox
	File     string
	Code     string
	Language string
	Context  string
}

func newCmdRun(f *cmdutil.Factory) *cobra.Command {
	opts := &runOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[runOptions]{
		Name:  "run",
		Short: "Run code in a sandbox's code interpreter and stream its output.",
		Long: "Run code on a Jupyter kernel inside the sandbox: given with -c, read from FILE,\n" +
			"or from stdin with -. Without --context it runs in the language's default\n" +
			"context; with one (see 'osb code context create') it sees what earlier runs\n" +
			"there left. Output is streamed as the kernel writes it, stdout to stdout and\n" +
			"stderr to stderr; a value the code ends with is printed as text (text/plain).\n\n" +
			"When the code raises, its traceback goes to stderr and osb exits 1; a kernel\n" +
			"that died is reported the same way (its context lost its state; a new one\n" +
			"works). Ctrl-C interrupts the kernel and exits 130. 125: osb could not run\n" +
			"the code (e.g. the sandbox has no Jupyter). See 'osb help exit-codes'.\n\n" +
			"-o json prints one object once the run has ended: context_id,\n" +
			"execution_count, stdout, stderr, results (each value's whole MIME bundle,\n" +
			"text/plain under \"text\"), error (name, value, traceback, or null) and\n" +
			"duration (seconds).",
		Example: "  osb code run abc123 -c 'print(6 * 7)'\n" +
			"  osb code run abc123 analysis.py\n" +
			"  echo 'x = 1' | osb code run abc123 --context $ctx -\n" +
			"  osb code run abc123 -l bash -c 'ls /workspace'\n" +
			"  osb code run abc123 -c '1 + 1' -o json -q results.0.text",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.OptionalArg("FILE", &opts.File)},
		Formats: &cmdutil.Formats{Allowed: []string{output.Raw, output.JSONF}, Default: output.Raw, Usage: "Output format: raw (default) or json."},
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Code, "code", "c", "", "The code to run (instead of FILE).")
			fs.StringVarP(&opts.Language, "language", "l", defaultLanguage, "Language of the code.")
			fs.Complete("language", languages...)
			fs.StringVar(&opts.Context, "context", "", "Run in this context (from 'osb code context create'), keeping its state.")
		},
		Run: runRun,
	})
}

// source reads the code from -c, FILE or stdin, or says what is wrong.
func (opts *runOptions) source() (string, error) {
	var code string
	switch {
	case opts.Code != "" && opts.File != "":
		return "", ops.UsageErrorf("give the code with -c or as FILE, not both")
	case opts.Code != "":
		code = opts.Code
	case opts.File == "":
		return "", ops.UsageErrorf("no code: give it with -c CODE, as a FILE, or - to read stdin")
	case opts.File == "-":
		b, err := io.ReadAll(opts.IOStreams.In)
		if err != nil {
			return "", fmt.Errorf("reading stdin: %w", err)
		}
		code = string(b)
	default:
		b, err := os.ReadFile(opts.File)
		if err != nil {
			return "", ops.UsageErrorf("cannot read %s: %v", opts.File, errors.Unwrap(err))
		}
		code = string(b)
	}
	if strings.TrimSpace(code) == "" {
		return "", ops.UsageErrorf("the code is empty")
	}
	return code, nil
}

// runResult is what a run printed under -o json.
type runResult struct {
	ContextID      string            `json:"context_id"`
	ExecutionCount *int              `json:"execution_count"`
	Stdout         string            `json:"stdout"`
	Stderr         string            `json:"stderr"`
	Results        []json.RawMessage `json:"results"`
	Error          *runError         `json:"error"`
	Duration       float64           `json:"duration"`
}

type runError struct {
	Name      string   `json:"name"`
	Value     string   `json:"value"`
	Traceback []string `json:"traceback"`
}

func runRun(ctx context.Context, opts *runOptions) error {
	code, err := opts.source()
	if err != nil {
		return err
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return runFailed(err)
	}
	r := &codeRun{opts: opts, json: opts.Format == output.JSONF, res: runResult{Results: []json.RawMessage{}}}
	req := &client.RunCodeRequest{Context: client.CodeContext{ID: opts.Context, Language: opts.Language}, Code: code}
	end, err := ops.RunCode(ctx, dp, req, ops.CommandRun{Output: r, Grace: interruptGrace, Stopping: r.interrupting})
	interrupted := ctx.Err() != nil
	switch {
	case errors.Is(err, ops.ErrStopUnconfirmed):
		return &ops.ExitError{Code: ops.InterruptedCode(ctx), Err: fmt.Errorf("interrupted: the kernel did not stop within %s", interruptGrace)}
	case err != nil && interrupted:
		return &ops.ExitError{Code: ops.ExitInterrupted, Err: err}
	case err != nil:
		return runFailed(err)
	}
	r.res.ContextID, r.res.Duration = end.ID, math.Round(end.Took.Seconds()*1000)/1000
	return r.finish(end.Last, interrupted, ops.InterruptedCode(ctx))
}

// runFailed: osb could not run the code (125), unless the server said the
// sandbox or context is not there, or who is asking may not (their codes).
func runFailed(err error) error {
	var apiErr *client.APIError
	var exitErr *ops.ExitError
	switch {
	case errors.As(err, &apiErr) && (apiErr.Status == 401 || apiErr.Status == 403 || apiErr.Status == 404),
		errors.As(err, &exitErr), errors.Is(err, context.Canceled):
		return err
	}
	return &ops.ExitError{Code: ops.ExitOsbFailed, Err: err}
}

// codeRun follows one run's events (ops.CommandOutput).
type codeRun struct {
	ops.Unbuffered
	opts *runOptions
	json bool
	res  runResult
	out  strings.Builder // stdout and stderr, held for -o json
	errs strings.Builder
	// mu: output comes from the stream's reader, the word on Ctrl-C from
	// the run.
	mu sync.Mutex
}

// Write takes one event before the terminal one.
func (r *codeRun) Write(ev *client.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ios := r.opts.IOStreams
	switch ev.Type {
	case client.EventStdout:
		r.output(ios.Out, &r.out, ev.Data)
	case client.EventStderr:
		r.output(ios.ErrOut, &r.errs, ev.Data)
	case client.EventCount:
		n := ev.ExecutionCount
		r.res.ExecutionCount = &n
	case client.EventResult:
		r.res.Results = append(r.res.Results, json.RawMessage(ev.Results))
		if !r.json {
			fmt.Fprintln(ios.Out, resultText(ev.Results))
		}
	}
}

func (r *codeRun) interrupting(ops.StopCause) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.json {
		fmt.Fprintln(r.opts.IOStreams.ErrOut, "Interrupting the kernel...")
	}
}

func (r *codeRun) output(w io.Writer, held *strings.Builder, data []byte) {
	if r.json {
		held.Write(data)
		return
	}
	w.Write(data)
}

// resultText is a value as text: its text/plain form, or the MIME types it
// has when it has none.
func resultText(bundle []byte) string {
	var m map[string]json.RawMessage
	json.Unmarshal(bundle, &m)
	var text string
	if json.Unmarshal(m["text"], &text) == nil && m["text"] != nil {
		return text
	}
	types := make([]string, 0, len(m))
	for k := range m {
		types = append(types, k)
	}
	sort.Strings(types)
	return "[result: " + strings.Join(types, ", ") + "]"
}

// ansi matches the colour codes of a kernel's traceback.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// traceback is an error as the kernel showed it, coloured only on a
// terminal that takes colour.
func (r *codeRun) traceback(e *client.ExecError) string {
	text := strings.Join(e.Traceback, "\n")
	if text == "" {
		text = e.Name + ": " + e.Value
	}
	if !r.opts.IOStreams.ANSIStderr() {
		text = ansi.ReplaceAllString(text, "")
	}
	return text
}

// finish ends a run at its terminal event.
func (r *codeRun) finish(ev *client.Event, interrupted bool, interruptCode int) error {
	if e := ev.Error; ev.Type == client.EventError {
		r.res.Error = &runError{Name: e.Name, Value: e.Value, Traceback: append([]string{}, e.Traceback...)}
		if !r.json {
			fmt.Fprintln(r.opts.IOStreams.ErrOut, r.traceback(e))
		}
	}
	if r.json {
		r.res.Stdout, r.res.Stderr = r.out.String(), r.errs.String()
		if err := r.opts.Printer().Object("", r.res); err != nil {
			return err
		}
	}
	switch {
	case ev.Type == client.EventServerError:
		return &ops.ExitError{Code: ops.ExitOsbFailed, Err: fmt.Errorf("the server failed the run: %s: %s", ev.Error.Name, ev.Error.Value)}
	case interrupted:
		if !r.json {
			fmt.Fprintln(r.opts.IOStreams.ErrOut, "Interrupted.")
		}
		return ops.Silent(interruptCode)
	case ev.Type == client.EventError:
		return ops.Silent(ExitCodeError)
	}
	return nil
}
