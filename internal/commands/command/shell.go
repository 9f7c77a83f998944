package command

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type shellOptions struct {
	cmdutil.Base
	Sandbox    cmdutil.Sandbox
	Command    []string
	Cwd        string
	Env        cmdutil.Pairs
	Session    string
	Takeover   bool
	NoStdin    bool
	interrupts interruptsFunc
	hangups    hangupsFunc
}

const shellLong = `Open an interactive shell in a sandbox, or run COMMAND in one with stdin
streamed to it, over execd's PTY sessions.

On a terminal you get the remote shell as if it were local: its prompt and
colours, full-screen programs (vim, top), your window size (and every change
of it), and Ctrl-C, Ctrl-Z and Ctrl-D go to the remote side. osb exits with
the shell's exit code, and your terminal is restored however it ends. A lost
connection is taken up again, and the output missed meanwhile is replayed.
If osb itself is stopped (SIGTERM, SIGHUP, a closed window), the shell goes
on: --session attaches to it again, --takeover evicts a client that holds it.

When stdin is not a terminal, the session runs in pipe mode: stdin is
streamed to COMMAND (or to bash, as a script) and ended, stdout and stderr
stay apart, and osb exits with the command's exit code:

  tar c dir | osb command shell SANDBOX_ID -- tar x -C /workspace

A real execd cannot end a command's input (osb server can): there osb
first reads stdin to its end and copies it to a file in the sandbox, which
the command then reads, so that it sees the end. -n (as ssh -n) leaves
stdin alone: the command reads an empty input, and a loop that reads its
own stdin line by line (while read ...; do osb shell ... -n; done) keeps
its lines. A command that stops reading its input early ends the run with
its own exit code, as a local pipe would.

A lost connection ends a pipe-mode run (exit 125): the session goes on.

Sessions osb creates end when their shell exits. 'osb command shell ls'
lists a sandbox's sessions (osb server only: execd has no such route);
'osb command shell kill' ends them.

This command is for people. Scripts and agents should use
'osb command run', which takes stdin with -i.`

// newCmdShell is the shell verb; subs are the commands below it (ls, kill).
func newCmdShell(f *cmdutil.Factory, short string, subs ...*cobra.Command) *cobra.Command {
	opts := &shellOptions{interrupts: notifyInterrupts, hangups: notifyHangups}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[shellOptions]{
		Name:  "shell",
		Short: short,
		Long:  shellLong,
		Example: "  osb command shell abc123\n" +
			"  osb command shell abc123 --cwd /workspace -e DEBUG=1 -- python3\n" +
			"  tar c src | osb command shell abc123 -- tar x -C /workspace\n" +
			"  osb command shell abc123 --session 1f0c…  --takeover",
		Args: []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.OptionalCommandArg(&opts.Command)},
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Cwd, "cwd", "w", "", "Working directory of the new session (created when missing).")
			fs.Pairs(&opts.Env, "env", "e", "Environment variable for the new session (repeatable).")
			fs.StringVar(&opts.Session, "session", "", "Attach to this existing session instead of creating one.")
			fs.BoolVar(&opts.Takeover, "takeover", false, "With --session: take the session over from the client connected to it.")
			fs.BoolVarP(&opts.NoStdin, "no-stdin", "n", false, "Do not read stdin: the command reads an empty input (as ssh -n).")
		},
		Run:         runShell,
		Subcommands: subs,
	})
}

func (opts *shellOptions) validate() error {
	switch {
	case opts.Takeover && opts.Session == "":
		return ops.UsageErrorf("--takeover needs --session: only an existing session can be taken over")
	case opts.Session != "" && (opts.Cwd != "" || len(opts.Env) > 0 || len(opts.Command) > 0):
		return ops.UsageErrorf("--session attaches to a running session: --cwd, --env and a command only apply to a new one")
	}
	return nil
}

func runShell(ctx context.Context, opts *shellOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	ios := opts.IOStreams
	tty := ios.IsStdinTTY() && !opts.NoStdin
	var stdin io.Reader = ios.In
	if opts.NoStdin {
		stdin = nil
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return osbFailed(err)
	}
	r := &ptyRun{ios: ios, sandbox: opts.Sandbox.ID, interrupts: opts.interrupts, hangups: opts.hangups}
	switch {
	case opts.Session != "":
		r.s = &ops.Session{DP: dp, ID: opts.Session, Terminal: tty, Takeover: opts.Takeover, Stdin: stdin}
	case tty:
		created, err := dp.CreatePTY(ctx, client.PTYRequest{Cwd: opts.Cwd, Command: opts.script(tty, opts.Getenv("TERM"))})
		if err != nil {
			return osbFailed(err)
		}
		r.s, r.owned = &ops.Session{DP: dp, ID: created.ID, Terminal: true, Stdin: stdin}, true
	default:
		if r.s, err = ops.StartCommand(ctx, dp, ops.Command{Script: opts.script(false, ""), Cwd: opts.Cwd, Stdin: stdin}); err != nil {
			return osbFailed(err)
		}
		r.owned = true
	}
	return r.run(ctx)
}

// script is the new session's command: none for a plain bash in pipe mode,
// as on execd. On a terminal, the local TERM goes along (as ssh sends it)
// and the shell is a login shell, with the image's prompt and colours.
func (opts *shellOptions) script(tty bool, term string) string {
	env := opts.Env
	if tty && term != "" {
		env = append(cmdutil.Pairs{{"TERM", term}}, env...)
	}
	switch {
	case len(opts.Command) > 0:
		return ptyScript(env, "", shellJoin(opts.Command))
	case tty:
		return ptyScript(env, "", "exec bash -l")
	case len(env) > 0:
		return ptyScript(env, "", "exec bash --norc --noprofile")
	}
	return ""
}

// newCmdShellGroup is `command shell`, with its ls and kill.
func newCmdShellGroup(f *cmdutil.Factory) *cobra.Command {
	return newCmdShell(f, "Open an interactive shell in a sandbox, or stream stdin to a command.",
		newCmdShellList(f), newCmdShellKill(f))
}

// NewCmdShellAlias is `osb shell`, the same as `osb command shell`.
func NewCmdShellAlias(f *cmdutil.Factory) *cobra.Command {
	return newCmdShell(f, "Open a shell in a sandbox (the same as 'osb command shell').")
}

type shellListOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
}

func newCmdShellList(f *cmdutil.Factory) *cobra.Command {
	opts := &shellListOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[shellListOptions]{
		Name:  "ls",
		Short: "List a sandbox's shell sessions.",
		Long: "List the PTY sessions of a sandbox: running or not, whether a client is connected,\n" +
			"how much output they wrote. This needs osb server, which adds the listing route;\n" +
			"a real execd has none, and then this says so (exit 1).",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Run:     runShellList,
	})
}

// shellSessionView is a PTY session as printed, under execd's names.
type shellSessionView struct {
	SessionID    string `json:"session_id" table:"1"`
	Running      bool   `json:"running" table:"3"`
	OutputOffset int64  `json:"output_offset" table:"5"`
	ExitCode     *int   `json:"exit_code,omitempty"`
	Mode         string `json:"mode,omitempty" table:"2"`
	Connected    bool   `json:"connected" table:"4"`
	Cwd          string `json:"cwd,omitempty"`
	Command      string `json:"command,omitempty" table:"7"`
	CreatedAt    string `json:"created_at,omitempty" table:"6"`
}

func runShellList(ctx context.Context, opts *shellListOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	list, err := dp.ListPTY(ctx)
	if errors.Is(err, client.ErrPTYListUnsupported) {
		return fmt.Errorf("%w; 'osb command shell kill %s SESSION_ID' ends a session whose id you know", err, opts.Sandbox.ID)
	}
	if err != nil {
		return err
	}
	views := make([]shellSessionView, len(list))
	for i, s := range list {
		views[i] = shellSessionView(s)
	}
	return opts.Printer().List("Shell Sessions", views)
}

func newCmdShellKill(f *cmdutil.Factory) *cobra.Command {
	opts := &endOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[endOptions]{
		Name:    "kill",
		Short:   "End shell sessions.",
		Long:    "End PTY sessions: their shell and what it runs are killed, and a connected client sees the end.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringsArg("SESSION_ID", &opts.SessionIDs)},
		Formats: cmdutil.TableFormats,
		Run: func(ctx context.Context, opts *endOptions) error {
			return endSessions(ctx, opts, "Killed session: ", opts.SessionIDs, (*client.DataPlane).DeletePTY)
		},
	})
}
