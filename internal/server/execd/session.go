package execd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// Bash sessions. Each session is one long-lived bash reading the script of
// each run on its stdin, so cd, exports and functions carry over between
// runs. Its stdout and stderr share one pipe (execd reports a session's
// stderr as stdout), and a run's output is sent as lines cut the way execd
// cuts a session's (sessionLines in lines.go). A run ends when the shell prints that run's sentinel
// line, "\x1eOSB-<random>:<status>\n"; the sentinel is new for every run,
// so no output can fake it. Runs of one session take turns.
//
// On execd every run is a fresh bash, so `exit` (or a failure under set -e)
// ends that run only. Here it would end the session's shell: instead, an
// EXIT trap set for the run prints the sentinel with the exit status and
// replaces the shell with a new bash in the same process, which keeps the
// working directory and exported variables (what execd keeps between runs)
// and reads the next runs. The shell keeps its script pipe and output pipe
// on fds 9 and 8 (set up when it starts), so the sentinel and the new bash
// find them even when the run had redirected its own stdin and stdout.

// sessionKillGrace is how long a timed-out run's shell gets to report after
// its children were killed, before the whole session is killed.
var sessionKillGrace = 2 * time.Second

type session struct {
	id       string
	cmd      *exec.Cmd
	isolated bool
	stdin    *os.File
	out      *os.File    // read end of the output pipe
	chunks   chan []byte // what pump read from out; closed when out ends
	exited   chan struct{}
	turn     sync.Mutex // held by the run in progress
}

func (rn *runner) sessionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /session", rn.createSession)
	mux.HandleFunc("POST /session/{id}/run", rn.runInSession)
	mux.HandleFunc("DELETE /session/{id}", rn.deleteSession)
}

// decodeOptionalBody reads a JSON body that may be empty (POST /session,
// POST /pty): an empty one leaves v as it is.
func decodeOptionalBody(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil && len(bytes.TrimSpace(body)) > 0 {
		err = json.Unmarshal(body, v)
	}
	return err
}

func (rn *runner) createSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Cwd string `json:"cwd"`
	}
	if err := decodeOptionalBody(r, &req); err != nil {
		badRequest(w, "error parsing request. "+err.Error())
		return
	}
	var err error
	cwd := ""
	if req.Cwd != "" {
		if cwd, err = rn.makeDir(req.Cwd); err != nil {
			badRequest(w, "invalid request. "+err.Error())
			return
		}
	}
	s, err := rn.startSession(cwd)
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeRuntime, "error creating session. "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"session_id": s.id})
}

// makeDir is a session's working directory, created when missing (only
// inside the sandbox's own areas: the host's directories are not its to change).
func (rn *runner) makeDir(dir string) (string, error) {
	p, err := rn.expandDir(dir, nil)
	if err != nil {
		return "", err
	}
	if name, err := rn.sb.ResolvePath(p); err == nil {
		if err := rn.sb.FS().MkdirAll(name, 0o755); err != nil {
			return "", fmt.Errorf("cannot create working directory %s: %w", dir, err)
		}
		return p, nil
	}
	return rn.workdir(dir, nil)
}

func (rn *runner) startSession(cwd string) (*session, error) {
	cmd, err := rn.sb.Command(context.Background(), sandbox.CommandSpec{Argv: []string{"bash", "--noprofile", "--norc"}, Cwd: cwd})
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
	err = rn.sb.StartCommand(cmd)
	inR.Close()
	outW.Close()
	if err == nil {
		_, err = io.WriteString(inW, sessionInit)
	}
	if err != nil {
		if cmd.Process != nil {
			kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
		inW.Close()
		outR.Close()
		return nil, err
	}
	s := &session{id: newSessionID(), cmd: cmd, isolated: rn.sb.Isolated(), stdin: inW, out: outR,
		chunks: make(chan []byte, 64), exited: make(chan struct{})}
	go s.pump()
	go func() {
		cmd.Wait()
		close(s.exited)
		// Children that outlive the shell may hold the pipe: stop reading soon.
		s.out.SetReadDeadline(time.Now().Add(drainGrace))
	}()
	rn.mu.Lock()
	rn.sessions[s.id] = s
	rn.mu.Unlock()
	return s, nil
}

func (s *session) pump() {
	defer close(s.chunks)
	defer s.out.Close()
	buf := make([]byte, outputChunk)
	for {
		n, err := s.out.Read(buf)
		if n > 0 {
			s.chunks <- append([]byte(nil), buf[:n]...)
		}
		if err != nil {
			return
		}
	}
}

func (s *session) gone() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// close kills the shell and everything in its process group, and returns
// once the shell is gone.
func (s *session) close() {
	kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.stdin.Close()
	<-s.exited
}

// killChildren kills what the shell started for the current run, leaving
// the shell itself (and so the session's state) alive. Under nsenter the
// group leader is nsenter and the shell is its child.
func (s *session) killChildren() {
	leader := s.cmd.Process.Pid
	for _, p := range groupMembers(leader) {
		if p.pid != leader && !(s.isolated && p.ppid == leader) {
			kill(p.pid, syscall.SIGKILL)
		}
	}
}

func (rn *runner) session(id string) *session {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.sessions[id]
}

func (rn *runner) removeSession(id string) *session {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	s := rn.sessions[id]
	delete(rn.sessions, id)
	return s
}

func (rn *runner) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s := rn.removeSession(id)
	if s == nil {
		writeError(w, http.StatusNotFound, codeNoContext, "session "+id+" not found")
		return
	}
	s.close()
}

// RunInSessionRequest is the body of POST /session/{id}/run, named as on execd.
type RunInSessionRequest struct {
	Command string `json:"command"`
	Cwd     string `json:"cwd"`
	Timeout int64  `json:"timeout"` // milliseconds; 0: none
}

func (rn *runner) runInSession(w http.ResponseWriter, r *http.Request) {
	var req RunInSessionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badRequest(w, "error parsing request, MAYBE invalid body format. "+err.Error())
		return
	}
	switch {
	case req.Command == "":
		badRequest(w, "invalid request, validation error Key: 'RunInSessionRequest.Command' Error:Field validation for 'Command' failed on the 'required' tag")
		return
	case strings.ContainsRune(req.Command, 0):
		badRequest(w, "invalid request, validation error the command contains a NUL byte")
		return
	case req.Timeout < 0:
		badRequest(w, "invalid request, validation error Key: 'RunInSessionRequest.Timeout' Error:Field validation for 'Timeout' failed on the 'gte' tag")
		return
	}
	s := rn.session(r.PathValue("id"))
	if s == nil {
		writeError(w, http.StatusInternalServerError, codeRuntime, "error running in session. context not found")
		return
	}
	cwd := ""
	if req.Cwd != "" {
		var err error
		if cwd, err = rn.workdir(req.Cwd, nil); err != nil {
			badRequest(w, "invalid request. "+err.Error())
			return
		}
	}
	s.turn.Lock()
	defer s.turn.Unlock()
	if s.gone() {
		rn.removeSession(s.id)
		writeError(w, http.StatusInternalServerError, codeRuntime, "error running in session. context not found")
		return
	}
	es := newEventStream(w)
	es.send(frame{Type: "init", Text: s.id})
	es.ping()
	if rn.runScript(es, s, cwd, &req) {
		rn.removeSession(s.id)
	}
}

// runScript feeds one run to the shell and streams its output until the
// sentinel line. It reports whether the shell is gone afterwards.
func (rn *runner) runScript(es *eventStream, s *session, cwd string, req *RunInSessionRequest) (gone bool) {
	s.discardStale()
	token := newCommandID()
	scan := &sentinelScanner{mark: []byte("\x1eOSB-" + token + ":")}
	lines := lineFramer{rule: sessionLines, emit: func(line []byte, _ bool) { es.output("stdout", line) }}
	started := time.Now()
	if _, err := io.WriteString(s.stdin, shellScript(cwd, req.Command, token)); err != nil {
		s.close()
	}
	var timeout, grace <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(time.Duration(req.Timeout) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	timedOut := false
	tick := time.NewTicker(pingInterval)
	defer tick.Stop()
	for {
		select {
		case c, ok := <-s.chunks:
			if !ok {
				// The shell is gone: `exit`, a kill, or a timeout it did not survive.
				if !timedOut {
					lines.write(scan.rest())
					lines.flush()
				}
				<-s.exited
				code, text := outcome(s.cmd.ProcessState)
				es.finishRun(timedOut, req.Timeout, code, text, time.Since(started))
				return true
			}
			show, status, done := scan.feed(c)
			if !timedOut {
				// After a timeout, what comes is the shell's report of
				// the kill ("Killed"), not the command's output.
				lines.write(show)
			}
			if done {
				lines.flush()
				es.finishRun(timedOut, req.Timeout, status, "exit status "+strconv.Itoa(status), time.Since(started))
				return false
			}
		case <-tick.C:
			es.ping()
		case <-timeout:
			lines.flush() // the run's last words before the deadline
			timedOut, timeout = true, nil
			s.killChildren()
			grace = time.After(sessionKillGrace)
		case <-grace:
			// Nothing to kill but the shell itself (a loop of builtins, say).
			grace = nil
			kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}

// finishRun writes a run's last frame. A timed-out run ends as on execd: a
// bare error object with no type and no blank line after it.
func (es *eventStream) finishRun(timedOut bool, timeoutMS int64, code int, text string, took time.Duration) {
	if timedOut {
		b, _ := json.Marshal(map[string]string{"code": codeRuntime,
			"message": "error running in session. timeout after " + (time.Duration(timeoutMS) * time.Millisecond).String()})
		es.write(b)
		return
	}
	es.send(terminalFrame(code, text, took))
}

// discardStale drops output that arrived between runs (from jobs a previous
// run left in the background): it belongs to no run.
func (s *session) discardStale() {
	for {
		select {
		case _, ok := <-s.chunks:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// sessionInit is the first line a session's shell reads: it keeps its
// output pipe on fd 8 and its script pipe on fd 9 (see the top of the file).
// `command exec`, not `builtin exec`: only the former keeps redirections.
const sessionInit = "command exec 8>&1 9<&0\n"

// shellScript is what the session's shell reads for one run, on one line
// (the command's own newlines stay inside its quotes). The command goes
// through eval, so a syntax error in it cannot swallow the sentinel, and
// gets /dev/null as stdin, so it cannot read the scripts of later runs;
// eval is a builtin, so cd and exports still change the shell. (A brace
// group around it would not do: after a syntax error inside eval, bash
// stops recognising the "{" that starts the next run.) The EXIT trap turns
// an `exit` into the end of the run (see the top of the file). Builtins are
// named as such in case the session redefined them.
func shellScript(cwd, command, token string) string {
	sentinel := `builtin printf '\036OSB-%s:%d\n' ` + token + ` "$?" >&8`
	respawn := sentinel + `; builtin exec "$BASH" --noprofile --norc 0<&9 1>&8 2>&8`
	var b strings.Builder
	// Each run starts with the session's stdout and stderr, as a fresh
	// bash on execd would, whatever an earlier run redirected with exec.
	b.WriteString("command exec 1>&8 2>&8; ")
	b.WriteString("builtin trap " + shellQuote(respawn) + " EXIT; ")
	if cwd != "" {
		b.WriteString("builtin cd -- " + shellQuote(cwd) + " && ")
	}
	b.WriteString("builtin eval " + shellQuote(command) + " </dev/null; ")
	b.WriteString(sentinel + "; builtin trap - EXIT\n")
	return b.String()
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sentinelScanner splits a run's output from the sentinel line that ends it.
type sentinelScanner struct {
	mark []byte
	buf  []byte // output not shown yet
}

// feed adds output and returns the part that can be shown now. It holds
// back a tail that may be the start of the sentinel. done reports the
// sentinel line was complete, with the status.
func (sc *sentinelScanner) feed(b []byte) (show []byte, status int, done bool) {
	sc.buf = append(sc.buf, b...)
	if i := bytes.Index(sc.buf, sc.mark); i >= 0 {
		tail := sc.buf[i+len(sc.mark):]
		nl := bytes.IndexByte(tail, '\n')
		if nl < 0 {
			show = append([]byte(nil), sc.buf[:i]...)
			sc.buf = append(sc.buf[:0], sc.buf[i:]...)
			return show, 0, false
		}
		status, _ = strconv.Atoi(string(tail[:nl]))
		show = sc.buf[:i]
		sc.buf = nil
		return show, status, true
	}
	cut := len(sc.buf) - markPrefix(sc.buf, sc.mark)
	show = append([]byte(nil), sc.buf[:cut]...)
	sc.buf = append(sc.buf[:0], sc.buf[cut:]...)
	return show, 0, false
}

// rest is whatever was held back, for when the shell is gone.
func (sc *sentinelScanner) rest() []byte { return sc.buf }

// markPrefix is the length of the longest end of b that begins mark.
func markPrefix(b, mark []byte) int {
	for n := min(len(b), len(mark)-1); n > 0; n-- {
		if bytes.HasSuffix(b, mark[:n]) {
			return n
		}
	}
	return 0
}

// newSessionID is a random UUID, as execd's session ids are.
func newSessionID() string {
	b := []byte(newCommandID())
	return fmt.Sprintf("%s-%s-4%s-a%s-%s", b[0:8], b[8:12], b[13:16], b[17:20], b[20:32])
}
