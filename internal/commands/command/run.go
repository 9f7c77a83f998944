package command

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

type runOptions struct {
	cmdutil.Base
	Sandbox    cmdutil.Sandbox
	Command    []string
	Background bool
	Workdir    string
	Timeout    cmdutil.DurationValue
	Argv       bool
	Env        cmdutil.Pairs
	User       string
	Stdin      bool
	interrupts interruptsFunc
	hangups    hangupsFunc
}

// runFormats are those of a foreground run (raw, json) and of a background
// one (table, json, yaml): the run picks its default and checks the choice.
var runFormats = &cmdutil.Formats{
	Allowed: []string{output.Table, output.JSONF, output.YAMLF, output.Raw},
	Usage:   "Output format: raw (default) or json in the foreground; table (default), json or yaml with --background.",
}

const separatorHelp = `Put -- between the sandbox id and the command, so that the command's own
options are not read as osb's:

  osb command run SANDBOX_ID -- ls -la /workspace

By default the arguments are joined into one line of shell text (each one
quoted for the shell) and run with bash -c, so "sh -c 'echo ready'" arrives
as typed. With --argv they are sent as a list and run without a shell: no
quoting, globbing or variable expansion happens.`

func newCmdRun(f *cmdutil.Factory) *cobra.Command {
	opts := &runOptions{interrupts: notifyInterrupts, hangups: notifyHangups}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[runOptions]{
		Name:  "run",
		Short: "Run a command in a sandbox. Use `--` before the sandbox command payload.",
		Long: "Run a command in a sandbox.\n\n" +
			"In the foreground its output is streamed as it is written, a line per event\n" +
			"execd sends (each ends in a newline, the last one too), and osb exits with the\n" +
			"command's own exit code (124: it hit --timeout; 125: osb could not learn the exit\n" +
			"code; 130: interrupted with Ctrl-C, which also stops the remote command; 141:\n" +
			"osb's output went to a pipe that was closed, as in '| head', which stops it too).\n" +
			"With --background it keeps running after osb exits; follow it with\n" +
			"'osb command status' and 'osb command logs --follow'.\n\n" +
			"In the foreground, -o json prints one object once the command has ended:\n" +
			"execution_id, exit_code (as the server reports it: -1 when a signal killed the\n" +
			"command, null when unknown), stdout, stderr, error (name, value, traceback, or\n" +
			"null) and duration (seconds, as a decimal number, from the request to the end).\n\n" +
			stdinHelp + "\n\n" + separatorHelp,
		Example: "  osb command run abc123 -- python3 -c 'print(42)'\n" +
			"  osb command run abc123 -w /workspace -e DEBUG=1 -t 5m -- make test\n" +
			"  osb command run abc123 -d -- python3 -m http.server 8000\n" +
			"  printf '3\\n1\\n2\\n' | osb command run abc123 -i -- sort -n\n" +
			"  osb command run abc123 -o json -- ls /nope",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.CommandArg(&opts.Command)},
		Formats: runFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.BoolVarP(&opts.Background, "background", "d", false, "Run in the background and print its execution id.")
			fs.StringVarP(&opts.Workdir, "workdir", "w", "", "Working directory of the command.")
			fs.Timeout(&opts.Timeout, "timeout", "t", "Stop the command after this long (e.g. 30s, 5m, 1h).")
			fs.BoolVar(&opts.Argv, "argv", false, "Send the arguments as an argv list, run without a shell.")
			fs.Pairs(&opts.Env, "env", "e", "Environment variable for the command (repeatable).")
			fs.StringVarP(&opts.User, "user", "u", "", "Run as this numeric user (and group): UID or UID:GID.")
			fs.BoolVarP(&opts.Stdin, "stdin", "i", false, "Send osb's stdin to the command, to its end (see Stdin above).")
		},
		Run: runRun,
	})
}

// checkFormat applies the official client's rule: a foreground run prints
// raw output (and, as our addition, a json result); a background run
// prints its start panel as table, json or yaml.
func checkFormat(format *string, background bool) error {
	allowed, def := []string{output.Raw, output.JSONF}, output.Raw
	if background {
		allowed, def = []string{output.Table, output.JSONF, output.YAMLF}, output.Table
	}
	if *format == "" {
		*format = def
		return nil
	}
	for _, a := range allowed {
		if *format == a {
			return nil
		}
	}
	return ops.UsageErrorf("This command does not support `-o %s`. Allowed values: %s.", *format, strings.Join(allowed, ", "))
}

// request turns the options into execd's RunCommandRequest, or a usage error.
func (opts *runOptions) request() (*client.RunCommandRequest, error) {
	req := &client.RunCommandRequest{Cwd: opts.Workdir, Background: opts.Background, Timeout: opts.Timeout.D.Milliseconds()}
	if opts.Argv {
		req.Argv = opts.Command
		if req.Argv[0] == "" {
			return nil, ops.UsageErrorf("--argv: the program name (the first argument) is empty")
		}
	} else {
		req.Command = shellJoin(opts.Command)
	}
	req.Envs = opts.Env.Map()
	if opts.User != "" {
		uid, gid, err := parseUser(opts.User)
		if err != nil {
			return nil, err
		}
		req.UID, req.GID = uid, gid
	}
	return req, nil
}

// parseUser reads UID or UID:GID, numbers from 0 to 2^31-1.
func parseUser(s string) (uid, gid *uint32, err error) {
	num := func(part string) (*uint32, bool) {
		n, err := strconv.ParseUint(part, 10, 32)
		if err != nil || n > math.MaxInt32 {
			return nil, false
		}
		v := uint32(n)
		return &v, true
	}
	u, g, hasGID := strings.Cut(s, ":")
	uid, ok := num(u)
	if ok && hasGID {
		gid, ok = num(g)
	}
	if !ok {
		return nil, nil, ops.UsageErrorf("invalid value for '--user': expected UID or UID:GID (numbers), got '%s'", s)
	}
	return uid, gid, nil
}

func runRun(ctx context.Context, opts *runOptions) error {
	if err := checkFormat(&opts.Format, opts.Background); err != nil {
		return err
	}
	req, err := opts.request()
	if err != nil {
		return err
	}
	if err := checkStdin(opts); err != nil {
		return err
	}
	if opts.Background {
		return runBackground(ctx, opts, req)
	}
	if opts.Stdin {
		return runWithStdin(ctx, opts, req)
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return osbFailed(err)
	}
	fg := &foreground{
		ios: opts.IOStreams, format: opts.Format, filter: opts.Printer().Filter, timeout: opts.Timeout.D, enforce: true, interrupts: opts.interrupts,
		open: func(ctx context.Context) (*client.EventStream, error) { return startCommand(ctx, dp, req) },
		stop: dp.InterruptCommand,
	}
	return fg.run(ctx)
}

// startCommand starts req. An execd older than argv support ignores the
// field, finds no command and answers 400; the same arguments then go as
// shell text, each one quoted, which runs the same program with the same
// arguments (through bash instead of directly).
func startCommand(ctx context.Context, dp *client.DataPlane, req *client.RunCommandRequest) (*client.EventStream, error) {
	stream, err := dp.RunCommand(ctx, req)
	if err == nil || len(req.Argv) == 0 || !argvUnsupported(err) {
		return stream, err
	}
	asText := *req
	asText.Command, asText.Argv = shellJoin(req.Argv), nil
	return dp.RunCommand(ctx, &asText)
}

// argvUnsupported recognises execd's answer to a request without the
// command it requires.
func argvUnsupported(err error) bool {
	var apiErr *client.APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusBadRequest &&
		strings.Contains(apiErr.Message, "'Command'") && strings.Contains(apiErr.Message, "'required'")
}

// noDetails stands for the reason of an error event that gave none.
const noDetails = "the server reported an error without details"

// osbFailed marks a failure before the remote command's exit code was
// known (125), unless it is an interruption or a usage error.
func osbFailed(err error) error {
	var exitErr *ops.ExitError
	if errors.Is(err, context.Canceled) || errors.As(err, &exitErr) {
		return err
	}
	return &ops.ExitError{Code: ops.ExitOsbFailed, Err: err}
}

// runBackground starts the command and reports its id. The stream ends
// with execution_complete as soon as the command has started; reading
// stops there, as the official SDK does, without waiting for the server to
// close it.
func runBackground(ctx context.Context, opts *runOptions, req *client.RunCommandRequest) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	run := ops.CommandRun{Open: func(ctx context.Context) (*client.EventStream, error) { return startCommand(ctx, dp, req) }}
	end, err := run.Run(ctx)
	switch {
	case errors.Is(err, io.EOF) && end.ID == "":
		return errors.New("the server closed the stream without an execution id")
	case errors.Is(err, io.EOF):
	case err != nil:
		return err
	case end.Last.Type != client.EventComplete:
		return fmt.Errorf("the command could not start: %s", cmp.Or(end.Last.Error.Value, noDetails))
	}
	return opts.Printer().Panel("Background Command Started", startedView{ExecutionID: end.ID, SandboxID: dp.SandboxID, Mode: "background"})
}

// startedView is what a background run prints.
type startedView struct {
	ExecutionID string `json:"execution_id"`
	SandboxID   string `json:"sandbox_id"`
	Mode        string `json:"mode"`
}

const stdinHelp = `Stdin: without -i/--stdin the command's input is empty and osb never
reads its own stdin, as 'docker exec' and 'kubectl exec' without -i: a loop
that reads a list (while read -r w; do osb command run ID -- echo "$w";
done < list) runs every line, and a script's stdin stays its own. With -i
osb's stdin goes to the command to its end, through an execd PTY session in
pipe mode (as 'osb command shell SANDBOX_ID -- COMMAND' does); the output
then comes as written, byte for byte, with no newline added at the end. A
real execd cannot end a command's input (osb server can): there stdin is
first read to its end and copied to a file in the sandbox that the command
reads. -i cannot go with --background (it gets no input) or --user (the
PTY API has no user).`

// checkStdin refuses -i where the input could not be sent.
func checkStdin(opts *runOptions) error {
	switch {
	case !opts.Stdin:
		return nil
	case opts.User != "":
		return ops.UsageErrorf("--stdin cannot be used with --user: stdin goes through execd's PTY API, which has no user; use 'osb command shell %s -- COMMAND' to run as the default user", opts.Sandbox.ID)
	case opts.Background:
		return ops.UsageErrorf("--stdin cannot be used with --background: a background command gets no input")
	}
	return nil
}

// runWithStdin runs the command in a pipe-mode PTY session of its own,
// with stdin sent to it to its end, then deletes the session.
func runWithStdin(ctx context.Context, opts *runOptions, req *client.RunCommandRequest) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return osbFailed(err)
	}
	command := req.Command
	if command == "" {
		command = shellJoin(req.Argv)
	}
	s, err := ops.StartCommand(ctx, dp, ops.Command{Script: ptyScript(opts.Env, opts.Workdir, command), Stdin: opts.IOStreams.In})
	if err != nil {
		return osbFailed(err)
	}
	r := &ptyRun{ios: opts.IOStreams, s: s, sandbox: opts.Sandbox.ID, owned: true,
		collect: opts.Format == output.JSONF, filter: opts.Printer().Filter, timeout: opts.Timeout.D,
		interrupts: opts.interrupts, hangups: opts.hangups}
	return r.run(ctx)
}

// ptyScript is the shell text a PTY session runs: the environment
// exported, the working directory entered (execd's PTY API takes neither
// for a command), then the command.
func ptyScript(env cmdutil.Pairs, cwd, command string) string {
	var b strings.Builder
	for _, kv := range env {
		b.WriteString("export " + kv[0] + "=" + shellQuote(kv[1]) + "\n")
	}
	if cwd != "" {
		b.WriteString("cd -- " + shellQuote(cwd) + " || exit 1\n")
	}
	b.WriteString(command)
	return b.String()
}
