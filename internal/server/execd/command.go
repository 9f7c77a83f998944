package execd

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// Timings of the command API, as observed on the real execd. Variables so
// that tests can shorten them.
var (
	pingInterval   = 3 * time.Second       // a ping frame this often while a stream is open
	commandTail    = time.Second           // POST /command holds its stream open this long after the end
	interruptGrace = 3 * time.Second       // SIGTERM, then SIGKILL after this
	drainGrace     = 50 * time.Millisecond // output still read after the process exited (its children may hold the pipe)
	retention      = 24 * time.Hour        // finished commands are forgotten after this
)

// Error codes of the command API.
const (
	codeBadBody   = "INVALID_REQUEST_BODY" // execd's code for every validation failure
	codeRuntime   = "RUNTIME_ERROR"
	codeNoQuery   = "MISSING_QUERY"
	codeNoContext = "CONTEXT_NOT_FOUND"
	outputChunk   = 64 << 10 // how much output is read at a time: a pipe's default capacity
)

// runner holds the commands and bash sessions of one sandbox.
type runner struct {
	sb       *sandbox.Sandbox
	mu       sync.Mutex
	execs    map[string]*execution
	sessions map[string]*session
}

func (h *handler) commandRoutes(mux *http.ServeMux) {
	rn := &runner{sb: h.sb, execs: map[string]*execution{}, sessions: map[string]*session{}}
	mux.HandleFunc("POST /command", rn.runCommand)
	mux.HandleFunc("DELETE /command", rn.interrupt)
	// One pattern for /command/status/{id} and /command/{id}/logs: as two
	// patterns they would overlap on /command/status/logs.
	mux.HandleFunc("GET /command/{a}/{b}", rn.commandInfo)
	rn.sessionRoutes(mux)
	rn.ptyRoutes(mux)
	rn.codeRoutes(mux)
}

// RunCommandRequest is the body of POST /command. Named as on execd, whose
// decoding errors quote the type name.
type RunCommandRequest struct {
	Command    string            `json:"command"`
	Argv       []string          `json:"argv"`
	Cwd        string            `json:"cwd"`
	Background bool              `json:"background"`
	Timeout    int64             `json:"timeout"` // milliseconds; 0: none
	UID        *int64            `json:"uid"`
	GID        *int64            `json:"gid"`
	Envs       map[string]string `json:"envs"`
}

// execution is one command started through POST /command.
type execution struct {
	id         string
	content    string // the command as given, for status
	background bool
	logPath    string // background: merged stdout+stderr
	started    time.Time
	pgid       int           // process group; 0 when the command never started
	done       chan struct{} // closed by finish
	// Set once by finish, before done is closed.
	exitCode *int
	errText  string
	finished time.Time
}

func (x *execution) finish(code *int, errText string) {
	x.exitCode, x.errText, x.finished = code, errText, time.Now()
	close(x.done)
}

func (x *execution) running() bool {
	select {
	case <-x.done:
		return false
	default:
		return true
	}
}

// stop ends the command as execd does: SIGTERM to its process group,
// SIGKILL if anything is left after a grace period. It returns once the
// command has finished and every process it had is gone.
func (x *execution) stop(isolated bool) {
	seen := map[int]bool{}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if x.signalUntilGone(sig, seen, isolated, interruptGrace) {
			return
		}
	}
	kill(-x.pgid, syscall.SIGKILL)
	<-x.done
}

// signalUntilGone sends sig once to each process of the command, again to
// any that appears later (an isolated command's nsenter may not have
// started its child yet when the first round goes out), until none is left
// or d has passed. In a sandbox with namespaces the group leader is
// nsenter, which ends the way its child ends (same status, same signal);
// sparing it lets the child's real fate show, e.g. the SIGKILL that ended a
// command that ignored SIGTERM.
func (x *execution) signalUntilGone(sig syscall.Signal, seen map[int]bool, spareLeader bool, d time.Duration) bool {
	sent := map[int]bool{}
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		procs := commandProcs(x.pgid, seen)
		if !x.running() && len(procs) == 0 {
			return true
		}
		for _, pid := range procs {
			if !sent[pid] && !(spareLeader && pid == x.pgid) {
				kill(pid, sig)
				sent[pid] = true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

type proc struct{ pid, ppid int }

// groupMembers lists the live (not zombie) processes of group pgid.
func groupMembers(pgid int) []proc {
	var out []proc
	for _, p := range liveProcs() {
		if p.pgrp == pgid {
			out = append(out, proc{p.pid, p.ppid})
		}
	}
	return out
}

// commandProcs is what a command started as group leader pgid has
// running: its process group, every process in seen that still lives, and
// every descendant of those, including those that left the group for a
// session of their own (setsid) and so escape a signal to the group. A
// setsid child whose parent died first is no one's descendant any more,
// yet the signal sent to it may not have ended it yet: seen keeps it. It
// adds what it finds to seen and forgets the pids that are gone.
func commandProcs(pgid int, seen map[int]bool) []int {
	all := liveProcs()
	children := map[int][]int{}
	var queue []int
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p.pid)
		if p.pgrp == pgid || seen[p.pid] {
			queue = append(queue, p.pid)
		}
	}
	clear(seen)
	var out []int
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	return out
}

type liveProc struct {
	pid int
	procStat
}

// liveProcs reads every live (not zombie) process of /proc.
func liveProcs() []liveProc {
	entries, _ := os.ReadDir("/proc")
	var out []liveProc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok && st.state != 'Z' {
			out = append(out, liveProc{pid, st})
		}
	}
	return out
}

type procStat struct {
	state      byte
	ppid, pgrp int
}

func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name may hold spaces and parentheses: fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	return procStat{f[0][0], ppid, pgrp}, err1 == nil && err2 == nil
}

func badRequest(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusBadRequest, codeBadBody, msg)
}

func (rn *runner) runCommand(w http.ResponseWriter, r *http.Request) {
	var req RunCommandRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badRequest(w, "error parsing request, MAYBE invalid body format. "+err.Error())
		return
	}
	rn.execute(w, r, &req, commandTail)
}

// execute runs a command and streams it, holding the stream open for tail
// after the end (POST /command has one; POST /code in command mode none).
func (rn *runner) execute(w http.ResponseWriter, r *http.Request, req *RunCommandRequest, tail time.Duration) {
	spec, msg := rn.commandSpec(req)
	if msg != "" {
		badRequest(w, "invalid request, validation error "+msg)
		return
	}
	// Not the request's context: a foreground command outlives a client
	// that went away, as on the real execd.
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if req.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.Timeout)*time.Millisecond)
	}
	cmd, err := rn.sb.Command(ctx, spec)
	if err != nil {
		cancel()
		writeError(w, http.StatusInternalServerError, codeRuntime, "error running commands "+err.Error())
		return
	}
	x := &execution{id: newCommandID(), content: req.Command, background: req.Background, done: make(chan struct{})}
	if len(req.Argv) > 0 {
		x.content = strings.Join(req.Argv, " ")
	}
	startErr := rn.findProgram(spec)
	if req.Background {
		rn.background(w, r, x, cmd, cancel, startErr, tail)
	} else {
		rn.foreground(w, r, x, cmd, cancel, startErr, tail)
	}
}

// commandSpec validates a request into a process description; msg says
// what is wrong, in execd's words where it has them.
func (rn *runner) commandSpec(req *RunCommandRequest) (spec sandbox.CommandSpec, msg string) {
	switch {
	case req.Command == "" && len(req.Argv) == 0:
		return spec, "Key: 'RunCommandRequest.Command' Error:Field validation for 'Command' failed on the 'required' tag"
	case req.Command != "" && len(req.Argv) > 0:
		return spec, "command and argv are mutually exclusive"
	case len(req.Argv) > 0 && req.Argv[0] == "":
		return spec, "argv[0] must not be empty"
	case strings.ContainsRune(req.Command+strings.Join(req.Argv, ""), 0):
		return spec, "the command contains a NUL byte"
	case req.Timeout < 0:
		return spec, "Key: 'RunCommandRequest.Timeout' Error:Field validation for 'Timeout' failed on the 'gte' tag"
	case req.GID != nil && req.UID == nil:
		return spec, "uid is required when gid is provided"
	}
	var ok bool
	if spec.UID, ok = userID(req.UID); !ok {
		return spec, "Key: 'RunCommandRequest.UID' Error:Field validation for 'UID' failed on the 'gte' tag"
	}
	if spec.GID, ok = userID(req.GID); !ok {
		return spec, "Key: 'RunCommandRequest.GID' Error:Field validation for 'GID' failed on the 'gte' tag"
	}
	spec.Shell, spec.Argv, spec.Env = req.Command, req.Argv, req.Envs
	if req.Cwd != "" {
		cwd, err := rn.workdir(req.Cwd, req.Envs)
		if err != nil {
			return spec, err.Error()
		}
		spec.Cwd = cwd
	}
	return spec, ""
}

func userID(n *int64) (*uint32, bool) {
	if n == nil {
		return nil, true
	}
	if *n < 0 || *n > math.MaxInt32 {
		return nil, false
	}
	id := uint32(*n)
	return &id, true
}

// expandDir expands $VAR, ${VAR} and a leading ~ in a working directory with
// the command's environment (an undefined variable is an error), and makes
// it absolute: relative paths start at /workspace.
func (rn *runner) expandDir(dir string, envs map[string]string) (string, error) {
	env := map[string]string{}
	for _, kv := range rn.sb.Environ(envs) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var undefined string
	p := os.Expand(dir, func(k string) string {
		v, ok := env[k]
		if !ok && undefined == "" {
			undefined = k
		}
		return v
	})
	if undefined != "" {
		return "", fmt.Errorf("working directory %s uses an undefined variable: %s", dir, undefined)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = env["HOME"] + p[1:]
	}
	if !path.IsAbs(p) {
		p = "/workspace/" + p
	}
	return path.Clean(p), nil
}

// workdir is expandDir for a directory that must exist.
func (rn *runner) workdir(dir string, envs map[string]string) (string, error) {
	p, err := rn.expandDir(dir, envs)
	if err != nil {
		return "", err
	}
	if fi, err := rn.stat(p); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("working directory does not exist: %s", dir)
	}
	return p, nil
}

// stat looks a sandbox path up: the sandbox's own areas through its root,
// anything else on the host, whose directories sandboxes share.
func (rn *runner) stat(p string) (os.FileInfo, error) {
	if name, err := rn.sb.ResolvePath(p); err == nil {
		return rn.sb.FS().Stat(name)
	}
	return os.Stat(p)
}

// findProgram reports an argv program that does not exist as a start
// failure, the same whether or not the sandbox runs in namespaces (where
// the exec happens behind nsenter and would look like an exit 127).
func (rn *runner) findProgram(spec sandbox.CommandSpec) error {
	if len(spec.Argv) == 0 {
		return nil
	}
	name := spec.Argv[0]
	if strings.Contains(name, "/") {
		p := name
		if !path.IsAbs(p) {
			p = path.Join(cmp.Or(spec.Cwd, "/workspace"), p)
		}
		if _, err := rn.stat(p); err != nil {
			return fmt.Errorf("fork/exec %s: no such file or directory", name)
		}
		return nil
	}
	pathVar := ""
	for _, kv := range rn.sb.Environ(spec.Env) {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if path.IsAbs(dir) {
			if fi, err := rn.stat(path.Join(dir, name)); err == nil && !fi.IsDir() {
				return nil
			}
		}
	}
	return fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

// start starts cmd unless startErr already says it cannot, and registers x.
func (rn *runner) start(x *execution, cmd *exec.Cmd, startErr error) error {
	x.started = time.Now()
	if startErr == nil {
		startErr = rn.sb.StartCommand(cmd)
	}
	if startErr == nil {
		x.pgid = cmd.Process.Pid
	} else {
		x.finish(nil, startErr.Error())
	}
	rn.register(x)
	return startErr
}

// register records x and forgets commands finished longer ago than retention.
func (rn *runner) register(x *execution) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	for id, old := range rn.execs {
		if !old.running() && time.Since(old.finished) > retention {
			delete(rn.execs, id)
			if old.logPath != "" {
				os.Remove(old.logPath)
			}
		}
	}
	rn.execs[x.id] = x
}

func (rn *runner) lookup(id string) *execution {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.execs[id]
}

// foreground streams the command's output as it comes, then its outcome.
func (rn *runner) foreground(w http.ResponseWriter, r *http.Request, x *execution, cmd *exec.Cmd, cancel context.CancelFunc, startErr error, tail time.Duration) {
	defer cancel()
	outR, outW, err := os.Pipe()
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeRuntime, err.Error())
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		writeError(w, http.StatusInternalServerError, codeRuntime, err.Error())
		return
	}
	defer outR.Close()
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW
	// Started and registered before init names it: a client may interrupt
	// the command as soon as it has read its id.
	err = rn.start(x, cmd, startErr)
	outW.Close()
	errW.Close()
	es := newEventStream(w)
	es.send(frame{Type: "init", Text: x.id})
	es.ping()
	if err != nil {
		es.send(startFailure(err))
		es.hold(r, tail)
		return
	}
	out := newCommandOutput(es)
	outD, errD := &drainer{f: outR, roomy: growPipe(outR)}, &drainer{f: errR, roomy: growPipe(errR)}
	var readers sync.WaitGroup
	readers.Go(func() { out.pump(outD, "stdout") })
	readers.Go(func() { out.pump(errD, "stderr") })
	stopPings := out.pings()
	cmd.Wait()
	outD.commandExited()
	errD.commandExited()
	readers.Wait()
	stopPings()
	out.end()
	code, text := outcome(cmd.ProcessState)
	x.finish(&code, errorText(code, text))
	es.send(terminalFrame(code, text, time.Since(x.started)))
	es.hold(r, tail)
}

// background starts the command with its output in a log file and answers
// at once: init, then execution_complete (or the start failure).
func (rn *runner) background(w http.ResponseWriter, r *http.Request, x *execution, cmd *exec.Cmd, cancel context.CancelFunc, startErr error, tail time.Duration) {
	logDir := filepath.Join(rn.sb.Dir(), "commands")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		cancel()
		writeError(w, http.StatusInternalServerError, codeRuntime, err.Error())
		return
	}
	x.logPath = filepath.Join(logDir, x.id+".output")
	log, err := os.OpenFile(x.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		cancel()
		writeError(w, http.StatusInternalServerError, codeRuntime, err.Error())
		return
	}
	// One file for both streams, so the log keeps their interleaving. Its
	// bytes are served as they are (GET /command/{id}/logs), not as lines.
	cmd.Stdout, cmd.Stderr = log, log
	err = rn.start(x, cmd, startErr) // registered before init names it
	log.Close()
	es := newEventStream(w)
	es.send(frame{Type: "init", Text: x.id})
	es.ping()
	if err != nil {
		cancel()
		es.send(startFailure(err))
		es.hold(r, tail)
		return
	}
	go func() {
		cmd.Wait()
		cancel()
		code, text := outcome(cmd.ProcessState)
		x.finish(&code, errorText(code, text))
	}()
	es.send(frame{Type: "execution_complete", ExecutionTime: time.Since(x.started).Milliseconds()})
	es.hold(r, tail)
}

// outcome is a finished process's exit code as execd reports it: -1 when a
// signal killed it, and the text of its status.
func outcome(ps *os.ProcessState) (int, string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, "signal: " + ws.Signal().String()
	}
	return ps.ExitCode(), ps.String()
}

func errorText(code int, text string) string {
	if code == 0 {
		return ""
	}
	return text
}

func terminalFrame(code int, text string, took time.Duration) frame {
	if code == 0 {
		return frame{Type: "execution_complete", ExecutionTime: took.Milliseconds()}
	}
	return frame{Type: "error", Error: &frameError{Name: "CommandExecError", Value: strconv.Itoa(code), Traceback: []string{text}}}
}

func startFailure(err error) frame {
	return frame{Type: "error", Error: &frameError{Name: "CommandExecError", Value: err.Error(), Traceback: []string{err.Error()}}}
}

func (rn *runner) commandInfo(w http.ResponseWriter, r *http.Request) {
	a, b := r.PathValue("a"), r.PathValue("b")
	switch {
	case a == "status":
		rn.status(w, b)
	case b == "logs":
		rn.logs(w, r, a)
	default:
		http.Error(w, "404 page not found", http.StatusNotFound)
	}
}

// statusBody is execd's CommandStatusResponse: exit_code, error and
// finished_at are absent (not null) while they mean nothing.
type statusBody struct {
	ID         string     `json:"id"`
	Content    string     `json:"content"`
	Running    bool       `json:"running"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Error      string     `json:"error,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

func (rn *runner) status(w http.ResponseWriter, id string) {
	x := rn.lookup(id)
	if x == nil {
		writeError(w, http.StatusNotFound, codeBadBody, "command not found: "+id)
		return
	}
	body := statusBody{ID: x.id, Content: x.content, Running: x.running(), StartedAt: x.started.UTC()}
	if !body.Running {
		fin := x.finished.UTC()
		body.ExitCode, body.Error, body.FinishedAt = x.exitCode, x.errText, &fin
	}
	writeJSON(w, http.StatusOK, body)
}

// logs returns a background command's merged output from a byte offset, and
// the offset of its end in the tail-cursor header.
func (rn *runner) logs(w http.ResponseWriter, r *http.Request, id string) {
	x := rn.lookup(id)
	switch {
	case x == nil:
		badRequest(w, "command not found: "+id)
		return
	case !x.background:
		badRequest(w, "command "+id+" is not running in background")
		return
	}
	cursor, err := strconv.ParseInt(r.URL.Query().Get("cursor"), 10, 64)
	if err != nil {
		cursor = 0 // absent or not a number: from the start, as execd does
	}
	if cursor < 0 {
		badRequest(w, "error seek file: seek "+x.id+".output: invalid argument")
		return
	}
	f, err := os.Open(x.logPath)
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeRuntime, "error reading logs: "+x.id)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeRuntime, "error reading logs: "+x.id)
		return
	}
	end := max(fi.Size(), cursor)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("EXECD-COMMANDS-TAIL-CURSOR", strconv.FormatInt(end, 10))
	w.WriteHeader(http.StatusOK)
	io.Copy(w, io.NewSectionReader(f, cursor, end-cursor))
}

// interrupt stops a running command, or closes and deletes a bash session.
func (rn *runner) interrupt(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		writeError(w, http.StatusBadRequest, codeNoQuery, "missing query parameter 'id'")
		return
	}
	if s := rn.removeSession(id); s != nil {
		s.close()
		return
	}
	x := rn.lookup(id)
	switch {
	case x == nil:
		// Spelling as the real execd's.
		writeError(w, http.StatusInternalServerError, codeRuntime, "error interruptting code context. no such session")
	case !x.running() || x.pgid == 0:
		writeError(w, http.StatusInternalServerError, codeRuntime, "error interruptting code context. command session "+id+" is not running")
	default:
		x.stop(rn.sb.Isolated())
	}
}

// frame is one event of an execution stream, fields in execd's order; zero
// values are left out as execd leaves them out.
type frame struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// TextBase64 is our addition: the exact bytes of an output line that
	// is not valid UTF-8, which "text" can only show with U+FFFD in place
	// of the invalid bytes. Clients that do not know it ignore it.
	TextBase64    string      `json:"text_base64,omitempty"`
	ExecutionTime int64       `json:"execution_time,omitempty"`
	Timestamp     int64       `json:"timestamp"`
	Error         *frameError `json:"error,omitempty"`
}

type frameError struct {
	Name      string   `json:"ename"`
	Value     string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

// eventStream writes frames as execd does: bare JSON, a blank line. Each
// frame is flushed at once, except a command's output lines: those are
// written together, in writes of about writeSize, and flushed at most every
// flushGap (commandOutput; 200 000 lines would otherwise be 200 000
// writes). After a write fails (the client left) it writes no more.
type eventStream struct {
	w       http.ResponseWriter
	broken  bool
	out     []byte    // frames not written yet
	dirty   bool      // frames written but not flushed
	flushed time.Time // the last flush
}

// writeSize is how many bytes of frames are gathered for one write.
const writeSize = 256 << 10

func newEventStream(w http.ResponseWriter) *eventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flush(w)
	return &eventStream{w: w}
}

func (es *eventStream) send(f frame) {
	f.Timestamp = time.Now().UnixMilli()
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	es.write(append(b, '\n', '\n'))
}

// write sends b after the frames still pending, and flushes.
func (es *eventStream) write(b []byte) {
	es.out = append(es.out, b...)
	es.flush()
}

// spill writes b, the pending frames, without flushing, and gives back
// its buffer emptied.
func (es *eventStream) spill(b []byte) []byte {
	if !es.broken && len(b) > 0 {
		if _, err := es.w.Write(b); err != nil {
			es.broken = true
		}
		es.dirty = true
	}
	return b[:0]
}

// pending says whether frames wait to be flushed.
func (es *eventStream) pending() bool { return len(es.out) > 0 || es.dirty }

// flush writes and flushes the pending frames.
func (es *eventStream) flush() {
	es.out = es.spill(es.out)
	if cap(es.out) > 4*writeSize {
		es.out = nil // what a long line of escapes grew it to is not kept
	}
	if !es.broken {
		flush(es.w)
	}
	es.dirty = false
	es.flushed = time.Now()
}

func (es *eventStream) ping() { es.send(frame{Type: "ping", Text: "pong"}) }

// output sends one line of output as its own frame.
func (es *eventStream) output(kind string, line []byte) {
	es.out = appendOutputFrame(es.out, kind, line, false, frameEnd(nil, time.Now().UnixMilli()), es.spill)
	es.flush()
}

// flushGap is the least time between two flushes of output lines while
// they keep coming: a command writing a pipe's worth at a time would
// otherwise cost a flush, a chunk and a wake-up of every hop on the way
// to the client for each few kilobytes. Output after a quiet moment goes
// at once.
const flushGap = 2 * time.Millisecond

// commandOutput is a POST /command stream while the command runs. Each
// pipe's reader cuts what it reads into lines and appends their frames to
// the stream itself, in turn with the other (mu): a line goes from the
// read buffer to the stream's buffer with no copy, no allocation and no
// hand-over between goroutines, the cost that matters at hundreds of
// thousands of lines a second. A client that reads slowly holds the
// reader that writes in its write, and the other one at mu, so the
// command blocks on its full pipes as on a slow terminal: execd holds at
// most the stream's buffer, and per pipe a read and the line it is
// assembling (maxLine), whatever the command writes.
type commandOutput struct {
	mu      sync.Mutex
	es      *eventStream
	due     bool        // frames wait for a flush at flushAt
	flushAt time.Time   // flushGap after the last flush
	timer   *time.Timer // makes that flush, unless a napping reader does
}

// pipeSize is the pipe a command's output goes through: while its reader
// naps (commandOutput.nap) the command writes on into it, up to 1 MiB
// every flushGap (500 MB/s) before it has to wait. The kernel's default
// of 64 KiB would hold a command that writes faster than that back to a
// tenth of it. 1 MiB is as much as an unprivileged process may ask for.
const pipeSize = 1 << 20

func newCommandOutput(es *eventStream) *commandOutput {
	out := &commandOutput{es: es}
	out.timer = time.AfterFunc(time.Hour, func() {
		out.mu.Lock()
		defer out.mu.Unlock()
		if out.due {
			out.due = false
			out.es.flush()
		}
	})
	out.timer.Stop()
	return out
}

// pump reads r until it ends and sends its output as lines, cut as the
// real execd cuts a command's output, the lines of one read stamped
// alike; the last line goes when r ends.
func (out *commandOutput) pump(r *drainer, kind string) {
	var stamp []byte
	lines := lineFramer{rule: commandLines, emit: func(line []byte, plain bool) {
		out.es.out = appendOutputFrame(out.es.out, kind, line, plain, stamp, out.es.spill)
	}}
	buf := make([]byte, outputChunk)
	for {
		n, err := r.Read(buf)
		out.mu.Lock()
		stamp = frameEnd(stamp[:0], time.Now().UnixMilli())
		lines.write(buf[:n])
		if err != nil {
			lines.flush()
		}
		out.written()
		out.mu.Unlock()
		if err != nil {
			return
		}
		if n < len(buf) && r.roomy {
			out.nap()
		}
	}
}

// nap waits, after a read that emptied the pipe, for the flush already
// due, and makes it itself (in the timer's place): the frames of what is
// read meanwhile would wait for it all the same, and reading on at once
// takes a fast command's output a few kilobytes at a time, a read, a wait
// and a wake-up each. The command writes on into the pipe meanwhile, and
// the next reads take it in whole buffers.
func (out *commandOutput) nap() {
	out.mu.Lock()
	if !out.due {
		out.mu.Unlock()
		return
	}
	out.timer.Stop()
	at := out.flushAt
	out.mu.Unlock()
	time.Sleep(time.Until(at))
	out.mu.Lock()
	if out.due {
		out.due = false
		out.es.flush()
	}
	out.mu.Unlock()
}

// written flushes what the stream holds, now or, when the last flush is
// more recent than flushGap, once it is not. Called with mu held.
func (out *commandOutput) written() {
	if !out.es.pending() || out.due {
		return
	}
	if wait := flushGap - time.Since(out.es.flushed); wait > 0 {
		out.due, out.flushAt = true, time.Now().Add(wait)
		out.timer.Reset(wait)
		return
	}
	out.es.flush()
}

// pings sends a ping every pingInterval until the returned stop is called.
func (out *commandOutput) pings() (stop func()) {
	tick := time.NewTicker(pingInterval)
	done := make(chan struct{})
	var pinger sync.WaitGroup
	pinger.Go(func() {
		for {
			select {
			case <-tick.C:
				out.mu.Lock()
				out.es.ping()
				out.mu.Unlock()
			case <-done:
				return
			}
		}
	})
	return func() {
		tick.Stop()
		close(done)
		pinger.Wait()
	}
}

// end flushes what is left once both readers have returned: the stream is
// then the caller's alone.
func (out *commandOutput) end() {
	out.mu.Lock()
	defer out.mu.Unlock()
	out.timer.Stop()
	out.due = false
	out.es.flush()
}

// hold keeps the stream open after its last frame, as execd's /command
// does, unless the client leaves first.
func (es *eventStream) hold(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// newCommandID is execd's command id: 32 hex characters.
func newCommandID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
