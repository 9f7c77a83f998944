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

func shellTool() toolSpec {
	return toolSpec{name: "shell_exec", extra: true, destructive: true, add: handler((*Server).shellExec),
		desc: "Type into an interactive shell (bash on a pseudo-terminal) in a sandbox, and read what it prints. " +
			"Leave session_id out to start a shell; pass the returned session_id to keep typing into the same one " +
			"(its directory, variables and running programs persist). The call returns once the output contains " +
			"until, or after idle_ms without output, or after timeout_seconds; end true then ends the shell " +
			"(it types exit after your input, and kills the shell if it has not exited 5 seconds later) and " +
			"returns its exit_code."}
}

type shellArgs struct {
	target
	SessionID        *string `json:"session_id,omitempty" jsonschema:"A shell this tool started; none starts a new one."`
	Input            string  `json:"input,omitempty" jsonschema:"What to type, e.g. \"ls -la\\n\" (end a command with a newline)."`
	Until            *string `json:"until,omitempty" jsonschema:"Return as soon as the new output contains this text."`
	IdleMillis       int     `json:"idle_ms,omitempty" default:"500" jsonschema:"Without until: return once the shell has printed nothing for this long."`
	TimeoutSeconds   float64 `json:"timeout_seconds,omitempty" default:"30" jsonschema:"Return after this long whatever happened."`
	WorkingDirectory *string `json:"working_directory,omitempty" jsonschema:"Directory a new shell starts in."`
	End              bool    `json:"end,omitempty" jsonschema:"Close the shell after this call."`
}

type shellResult struct {
	SessionID string      `json:"session_id"`
	Output    string      `json:"output"`
	Running   bool        `json:"running"`
	ExitCode  *int        `json:"exit_code"`
	TimedOut  bool        `json:"timed_out"`
	Truncated *truncation `json:"truncated,omitempty"`
}

// shell is an open PTY session: its socket stays connected between calls
// (ops.Session relays it), and what the shell prints is gathered until a
// call takes it.
type shell struct {
	id, sandbox string
	dp          *client.DataPlane
	in          *io.PipeWriter // what a call types, to the session
	stop        context.CancelFunc
	max         int

	mu       sync.Mutex
	out      []byte // printed and not taken yet: the newest max bytes
	dropped  int64
	exited   bool
	exitCode *int
	changed  chan struct{} // closed, and replaced, on every change
}

func (s *Server) shellExec(ctx context.Context, _ *mcp.CallToolRequest, a shellArgs) (*shellResult, error) {
	if a.TimeoutSeconds <= 0 || a.IdleMillis <= 0 {
		return nil, usage("timeout_seconds and idle_ms must be positive")
	}
	sh, err := s.shellFor(ctx, a)
	if err != nil {
		return nil, err
	}
	if a.Input != "" {
		if _, err := sh.in.Write([]byte(a.Input)); err != nil {
			return nil, err
		}
	}
	until := ""
	if a.Until != nil {
		until = *a.Until
	}
	timedOut := sh.wait(ctx, until, time.Duration(a.IdleMillis)*time.Millisecond, seconds(a.TimeoutSeconds))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if a.End {
		s.endShell(ctx, sh, true)
	}
	res := sh.take()
	res.TimedOut = timedOut
	if a.End {
		res.Running = false
	}
	return res, nil
}

// shellFor returns the shell the call names, or starts one.
func (s *Server) shellFor(ctx context.Context, a shellArgs) (*shell, error) {
	id, err := s.admit(ctx, a.target)
	if err != nil {
		return nil, err
	}
	if a.SessionID != nil && *a.SessionID != "" {
		v, _ := s.shells.Load(*a.SessionID)
		sh, _ := v.(*shell)
		if sh == nil || sh.sandbox != id {
			return nil, usage("no shell %q was started by this server in sandbox %s: leave session_id out to start one", *a.SessionID, id)
		}
		return sh, nil
	}
	dp, err := s.c.DataPlane(ctx, id, client.PortExecd)
	if err != nil {
		return nil, err
	}
	req := client.PTYRequest{}
	if a.WorkingDirectory != nil {
		req.Cwd = *a.WorkingDirectory
	}
	created, err := dp.CreatePTY(ctx, req)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	sess := &ops.Session{DP: dp, ID: created.ID, Terminal: true, Stdin: pr}
	// The socket outlives this call: it is the session's.
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	if err := sess.Connect(rctx); err != nil {
		stop()
		_ = sess.Delete(ctx)
		return nil, err
	}
	sh := &shell{id: created.ID, sandbox: id, dp: dp, in: pw, stop: stop, max: s.opts.MaxOutput, changed: make(chan struct{})}
	sess.Out = sh
	go sh.run(rctx, sess, pr)
	s.shells.Store(created.ID, sh)
	return sh, nil
}

// run relays the session until it ends; then typing into it fails.
func (sh *shell) run(ctx context.Context, sess *ops.Session, in *io.PipeReader) {
	res := sess.Run(ctx)
	in.CloseWithError(errors.New("the shell has ended"))
	sh.mu.Lock()
	sh.exited, sh.exitCode = true, res.ExitCode
	sh.changedLocked()
	sh.mu.Unlock()
}

// Stdout and Stderr gather what the shell prints (ops.Output); notes of
// the connection are not the shell's output.
func (sh *shell) Stdout(p []byte) error {
	sh.mu.Lock()
	sh.append(p)
	sh.changedLocked()
	sh.mu.Unlock()
	return nil
}

func (sh *shell) Stderr(p []byte) error { return sh.Stdout(p) }
func (sh *shell) Note(string)           {}

func (sh *shell) changedLocked() {
	close(sh.changed)
	sh.changed = make(chan struct{})
}

// append keeps the newest max bytes; call with mu held.
func (sh *shell) append(b []byte) {
	sh.out = append(sh.out, b...)
	if over := len(sh.out) - sh.max; over > 0 {
		over = runeStart(string(sh.out), over)
		sh.out = append(sh.out[:0:0], sh.out[over:]...)
		sh.dropped += int64(over)
	}
}

// wait returns once the shell ended, the output not taken yet contains
// until (when given), it has been quiet for idle (when until is not given
// and idle is not 0), or timeout passed; it reports the last.
func (sh *shell) wait(ctx context.Context, until string, idle, timeout time.Duration) (timedOut bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	quiet := time.NewTimer(idle)
	defer quiet.Stop()
	for {
		sh.mu.Lock()
		done := sh.exited || (until != "" && strings.Contains(string(sh.out), until))
		changed := sh.changed
		sh.mu.Unlock()
		if done {
			return false
		}
		var idleC <-chan time.Time
		if until == "" && idle > 0 {
			idleC = quiet.C
		}
		select {
		case <-changed:
			quiet.Reset(idle)
		case <-idleC:
			return false
		case <-deadline.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// take hands over the output gathered since the last call.
func (sh *shell) take() *shellResult {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	out := string(sh.out)
	// The budget counts JSON text, where a terminal's escapes and line
	// ends take more room than the bytes kept.
	cut := fitBack(out, sh.max)
	out, sh.dropped = out[cut:], sh.dropped+int64(cut)
	res := &shellResult{SessionID: sh.id, Output: out, Running: !sh.exited, ExitCode: sh.exitCode}
	if sh.dropped > 0 {
		res.Truncated = &truncation{OmittedBytes: sh.dropped, Limit: sh.max, Note: fmt.Sprintf(
			"the shell printed more than the %d-byte output budget of this server (osb mcp --max-output) since the last call: "+
				"the oldest %d bytes were left out; send long output to a file and read it with file_read", sh.max, sh.dropped)}
	}
	sh.out, sh.dropped = nil, 0
	return res
}

// endGrace bounds each wait of endShell: for the shell to exit by itself,
// then for its exit frame once it is killed.
const endGrace = 5 * time.Second

// exitLine ends bash once it has read what was typed before: Ctrl-U drops
// a line typed in part, and exit without a code exits with the status of
// the last command. (Ctrl-D would do the same at a prompt, but one typed
// while a command runs is lost.)
const exitLine = "\x15exit\n"

// endShell forgets a shell and ends it. A gentle end first types exitLine
// and gives the shell endGrace to exit with the code it chooses; then the
// session is deleted, which kills what is left, and the exit frame is
// waited for, so that take reports the exit code.
func (s *Server) endShell(ctx context.Context, sh *shell, gentle bool) {
	s.shells.Delete(sh.id)
	ctx = context.WithoutCancel(ctx)
	runsAfter := func(d time.Duration) bool { return sh.wait(ctx, "", 0, d) }
	if gentle && runsAfter(0) {
		if _, err := io.WriteString(sh.in, exitLine); err == nil {
			runsAfter(endGrace)
		}
	}
	_ = sh.dp.DeletePTY(ctx, sh.id)
	runsAfter(endGrace)
	sh.stop()
}

// endShells ends every shell at once, without the grace of a gentle end.
func (s *Server) endShells() {
	var wg sync.WaitGroup
	s.shells.Range(func(_, sh any) bool {
		wg.Go(func() { s.endShell(context.Background(), sh.(*shell), false) })
		return true
	})
	wg.Wait()
}
