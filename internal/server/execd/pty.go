//go:build linux

package execd

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// Interactive sessions (execd's /pty API, described in its PTY.md rather
// than the OpenAPI file). POST /pty only records the session; its bash
// starts when the first WebSocket connects: on a pseudo-terminal, or with
// plain pipes when that connection asks for ?pty=0. Output goes to the
// connected client, if any, and into a replay ring, so a client that
// reconnects with ?since=OFFSET gets what it missed. When bash exits the
// session stays; the next connection starts a new bash in it (as on execd),
// and DELETE /pty/{id} ends it.
//
// Beyond execd (documented in docs/cli as osb server extensions):
//   - GET /pty lists the sessions (execd has no such route);
//   - GET /pty/{id} adds exit_code once bash has exited;
//   - the client frame {"type":"stdin_eof"} closes bash's stdin in pipe
//     mode; execd has no way to end a pipe-mode session's input.

// ptyTTYSize is a new terminal's size until the client sends its own.
var ptyTTYSize = pty.Winsize{Cols: 80, Rows: 24}

// ptyHost holds the interactive sessions of one sandbox.
type ptyHost struct {
	rn       *runner
	mu       sync.Mutex
	sessions map[string]*ptySession
}

func (rn *runner) ptyRoutes(mux *http.ServeMux) {
	h := &ptyHost{rn: rn, sessions: map[string]*ptySession{}}
	mux.HandleFunc("POST /pty", h.create)
	mux.HandleFunc("GET /pty", h.list)
	mux.HandleFunc("GET /pty/{id}", h.status)
	mux.HandleFunc("DELETE /pty/{id}", h.remove)
	mux.HandleFunc("GET /pty/{id}/ws", h.serveWS)
}

// ptySession is one interactive session: its settings, its replay ring, the
// bash currently running in it (if any) and the client connected to it.
type ptySession struct {
	id, cwd, command string
	created          time.Time
	sb               *sandbox.Sandbox

	mu       sync.Mutex
	ring     *replayRing
	run      *ptyRun    // the latest bash; nil before the first connection
	sink     *ptySink   // where live output goes; nil when no client reads it
	holder   *ptyHolder // the connected client; nil when none
	deleted  bool
	exitCode *int // the latest bash's, once it exited
}

// ptyRun is one bash process of a session.
type ptyRun struct {
	cmd     *exec.Cmd
	tty     *os.File       // the terminal's master side; nil in pipe mode
	stdin   io.WriteCloser // the master, or the write end of the stdin pipe
	outputs []*drainer     // what pump reads: the master, or the stdout and stderr pipes
	ended   chan struct{}  // closed once bash exited and its output was read
	outEnd  sync.WaitGroup // output readers still running
}

func (r *ptyRun) mode() string {
	if r.tty != nil {
		return "pty"
	}
	return "pipe"
}

// ptyStatus is GET /pty/{id}, and one entry of GET /pty.
type ptyStatus struct {
	SessionID    string `json:"session_id"`
	Running      bool   `json:"running"`
	OutputOffset int64  `json:"output_offset"`
	ExitCode     *int   `json:"exit_code,omitempty"`
}

// ptyListEntry adds what only the list shows.
type ptyListEntry struct {
	ptyStatus
	Mode      string `json:"mode,omitempty"` // pty or pipe, once bash started
	Connected bool   `json:"connected"`
	Cwd       string `json:"cwd,omitempty"`
	Command   string `json:"command,omitempty"`
	CreatedAt string `json:"created_at"`
}

func (h *ptyHost) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Cwd     string `json:"cwd"`
		Command string `json:"command"`
	}
	if err := decodeOptionalBody(r, &req); err != nil {
		badRequest(w, "error parsing request: "+err.Error())
		return
	}
	var err error
	cwd := ""
	if req.Cwd != "" {
		if cwd, err = h.rn.makeDir(req.Cwd); err != nil {
			writeError(w, http.StatusInternalServerError, codeRuntime, "error creating pty session: "+err.Error())
			return
		}
	}
	s := &ptySession{id: newSessionID(), cwd: cwd, command: req.Command, created: time.Now().UTC(),
		sb: h.rn.sb, ring: newReplayRing(replayLimit)}
	h.mu.Lock()
	h.sessions[s.id] = s
	h.mu.Unlock()
	// stdin_eof: this server takes the frame that ends a command's input
	// (an extension; clients send it only when told so).
	writeJSON(w, http.StatusCreated, map[string]any{"session_id": s.id, "stdin_eof": true})
}

func (h *ptyHost) session(w http.ResponseWriter, r *http.Request) *ptySession {
	id := r.PathValue("id")
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil {
		writeError(w, http.StatusNotFound, codeNoContext, "pty session "+id+" not found")
	}
	return s
}

func (h *ptyHost) status(w http.ResponseWriter, r *http.Request) {
	if s := h.session(w, r); s != nil {
		writeJSON(w, http.StatusOK, s.status())
	}
}

func (h *ptyHost) list(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	all := make([]*ptySession, 0, len(h.sessions))
	for _, s := range h.sessions {
		all = append(all, s)
	}
	h.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].created.Before(all[j].created) })
	out := make([]ptyListEntry, 0, len(all))
	for _, s := range all {
		out = append(out, s.listEntry())
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

func (h *ptyHost) remove(w http.ResponseWriter, r *http.Request) {
	s := h.session(w, r)
	if s == nil {
		return
	}
	h.mu.Lock()
	delete(h.sessions, s.id)
	h.mu.Unlock()
	s.end()
	w.WriteHeader(http.StatusOK)
}

func (s *ptySession) status() ptyStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ptyStatus{SessionID: s.id, Running: s.runningLocked(), OutputOffset: s.ring.total, ExitCode: s.exitCode}
}

func (s *ptySession) listEntry() ptyListEntry {
	st := s.status()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := ptyListEntry{ptyStatus: st, Connected: s.holder != nil, Cwd: s.cwd, Command: s.command,
		CreatedAt: s.created.Format(time.RFC3339)}
	if s.run != nil {
		e.Mode = s.run.mode()
	}
	return e
}

func (s *ptySession) runningLocked() bool {
	if s.run == nil {
		return false
	}
	select {
	case <-s.run.ended:
		return false
	default:
		return true
	}
}

// start runs a new bash in the session unless one is running. Callers hold
// the session (as its connected client).
func (s *ptySession) start(pipe bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.deleted:
		return errors.New("pty session is closing")
	case s.runningLocked():
		return nil
	}
	argv := []string{"bash", "--norc", "--noprofile"}
	switch {
	case s.command != "" && !pipe && s.sb.Isolated():
		// In namespaces bash runs under nsenter, in nsenter's process
		// group. With job control the command gets a group of its own, the
		// terminal's foreground one, so that Ctrl-C reaches it and not
		// nsenter (an interactive bash does this by itself).
		argv = append(argv, "-c", "set -m\n"+s.command)
	case s.command != "":
		argv = append(argv, "-c", s.command)
	}
	cmd, err := s.sb.Command(context.Background(), sandbox.CommandSpec{Argv: argv, Cwd: s.cwd})
	if err != nil {
		return err
	}
	run := &ptyRun{cmd: cmd, ended: make(chan struct{})}
	if pipe {
		err = s.startPipes(run)
	} else {
		err = s.startTTY(run)
	}
	if err != nil {
		return err
	}
	s.run, s.exitCode = run, nil
	go s.await(run)
	return nil
}

// startTTY starts bash as the leader of a new session whose controlling
// terminal is a fresh pseudo-terminal.
func (s *ptySession) startTTY(run *ptyRun) error {
	attr := run.cmd.SysProcAttr
	attr.Setpgid, attr.Setsid, attr.Setctty = false, true, true
	blocking, tty, err := pty.Open()
	if err != nil {
		return err
	}
	size := ptyTTYSize
	if err := pty.Setsize(blocking, &size); err != nil {
		blocking.Close()
		tty.Close()
		return err
	}
	run.cmd.Stdin, run.cmd.Stdout, run.cmd.Stderr = tty, tty, tty
	err = s.sb.StartCommand(run.cmd)
	tty.Close()
	if err != nil {
		blocking.Close()
		return err
	}
	master, err := pollable(blocking)
	if err != nil {
		syscall.Kill(-run.cmd.Process.Pid, syscall.SIGKILL)
		run.cmd.Wait()
		return err
	}
	out := &drainer{f: master}
	run.tty, run.stdin, run.outputs = master, master, []*drainer{out}
	run.outEnd.Add(1)
	go s.pump(run, out, chanStdout)
	return nil
}

// startPipes starts bash with its stdin, stdout and stderr on three pipes.
func (s *ptySession) startPipes(run *ptyRun) error {
	var files []*os.File // the pipes' six ends, closed on failure
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	fail := func(err error) error {
		for _, f := range files {
			f.Close()
		}
		return err
	}
	inR, inW, err := pipe()
	if err != nil {
		return fail(err)
	}
	outR, outW, err := pipe()
	if err != nil {
		return fail(err)
	}
	errR, errW, err := pipe()
	if err != nil {
		return fail(err)
	}
	run.cmd.Stdin, run.cmd.Stdout, run.cmd.Stderr = inR, outW, errW
	if err := s.sb.StartCommand(run.cmd); err != nil {
		return fail(err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	outD, errD := &drainer{f: outR}, &drainer{f: errR}
	run.stdin, run.outputs = inW, []*drainer{outD, errD}
	run.outEnd.Add(2)
	go s.pump(run, outD, chanStdout)
	go s.pump(run, errD, chanStderr)
	return nil
}

// pump reads one output of a run until it ends: all writers closed it, or
// bash exited, what it had written was read (however slow the client that
// holds the reader back), and whatever it left behind (a background job
// holding the terminal) got cut off after drainGrace.
func (s *ptySession) pump(run *ptyRun, r *drainer, channel byte) {
	defer run.outEnd.Done()
	buf := make([]byte, outputChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.emit(channel, buf[:n])
		}
		if err != nil {
			break
		}
	}
	if run.tty == nil {
		r.f.Close() // the master is closed by await, after the stdin side is done with it
	}
}

// await waits for bash, lets the output readers finish, and ends the run.
func (s *ptySession) await(run *ptyRun) {
	run.cmd.Wait()
	for _, d := range run.outputs {
		d.commandExited()
	}
	run.outEnd.Wait()
	run.stdin.Close()
	code := run.cmd.ProcessState.ExitCode()
	s.mu.Lock()
	s.exitCode = &code
	sink := s.sink
	s.sink = nil
	close(run.ended)
	s.mu.Unlock()
	if sink != nil {
		close(sink.out) // the connected client sends the exit frame after the rest
	}
}

// emit records output in the ring and hands it to the connected client.
// Both happen under the lock that attach takes, so that every byte is
// either in a new client's replay or in its live output, never both.
func (s *ptySession) emit(channel byte, p []byte) {
	s.mu.Lock()
	s.ring.write(p)
	sink := s.sink
	s.mu.Unlock()
	if sink != nil {
		sink.send(channel, p)
	}
}

// attach makes sink the session's output and returns the replay from since.
func (s *ptySession) attach(sink *ptySink, since int64) ([]byte, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sink = sink
	if !s.runningLocked() {
		// The run ended between start and attach: nothing more will come.
		close(sink.out)
		s.sink = nil
	}
	return s.ring.since(since)
}

// detach stops live output to sink if it still gets it.
func (s *ptySession) detach(sink *ptySink) {
	s.mu.Lock()
	if s.sink == sink {
		s.sink = nil
	}
	s.mu.Unlock()
	sink.leave.Do(func() { close(sink.gone) })
}

// end kills the session's bash (and all it started) for DELETE; the
// connected client gets the exit frame as for any end.
func (s *ptySession) end() {
	s.mu.Lock()
	s.deleted = true
	run := s.run
	s.mu.Unlock()
	if run == nil {
		return
	}
	select {
	case <-run.ended:
		return
	default:
	}
	if fg := run.foreground(); fg > 0 {
		syscall.Kill(-fg, syscall.SIGKILL) // a job bash moved to a group of its own
	}
	syscall.Kill(-run.cmd.Process.Pid, syscall.SIGKILL)
	<-run.ended
}

// foreground is the terminal's foreground process group (0: none, or pipe mode).
func (r *ptyRun) foreground() int {
	fg := 0
	if r.tty != nil {
		control(r.tty, func(fd int) error {
			var err error
			fg, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
			return err
		})
	}
	return fg
}

// pollable turns the master side of a terminal, which creack/pty leaves in
// blocking mode, into a file the runtime poller serves, so that reading it
// can be cut off by a deadline and blocks no thread.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// control runs an ioctl on f's descriptor without f.Fd(), which would put
// it back in blocking mode.
func control(f *os.File, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = op(int(fd)) }); err != nil {
		return err
	}
	return opErr
}

// writeStdin feeds bash's input.
func (s *ptySession) writeStdin(p []byte) error {
	run := s.current()
	if run == nil {
		return errors.New("session not started")
	}
	_, err := run.stdin.Write(p)
	return err
}

// closeStdin ends bash's input (pipe mode only: a terminal has no end).
func (s *ptySession) closeStdin() error {
	run := s.current()
	switch {
	case run == nil:
		return errors.New("session not started")
	case run.tty != nil:
		return errors.New("stdin_eof needs pipe mode (?pty=0); on a terminal send Ctrl-D (0x04)")
	}
	if err := run.stdin.Close(); !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil // bash has exited already: its input is over anyway
}

// resize sets the terminal's size (nothing to do in pipe mode).
func (s *ptySession) resize(cols, rows int) error {
	run := s.current()
	if run == nil || run.tty == nil {
		return nil
	}
	return control(run.tty, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
}

// ptySignals are the signals a client may name, as on execd.
var ptySignals = map[string]syscall.Signal{
	"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL,
	"SIGQUIT": syscall.SIGQUIT, "SIGHUP": syscall.SIGHUP,
}

// signal delivers a named signal. In pipe mode it goes to bash's process
// group, as on execd. On a terminal it goes to the terminal's foreground
// process group, as a key press would: bash's own group at the prompt (the
// same as execd), the running job otherwise.
func (s *ptySession) signal(name string) {
	sig, ok := ptySignals[name]
	run := s.current()
	if !ok || run == nil || !s.running() {
		return
	}
	group := run.cmd.Process.Pid
	if fg := run.foreground(); fg > 0 {
		group = fg
	}
	if !s.sb.Isolated() {
		syscall.Kill(-group, sig)
		return
	}
	// In namespaces the leader is nsenter, which would die of the signal
	// instead of passing it on: only the processes it runs get it.
	for _, p := range groupMembers(group) {
		if p.pid != run.cmd.Process.Pid {
			syscall.Kill(p.pid, sig)
		}
	}
}

func (s *ptySession) current() *ptyRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run
}

func (s *ptySession) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runningLocked()
}

// Output channels: the first byte of a binary frame.
const (
	chanStdin  byte = 0x00
	chanStdout byte = 0x01
	chanStderr byte = 0x02
	chanReplay byte = 0x03
)

// ptyChunk is output for one client.
type ptyChunk struct {
	channel byte
	data    []byte
}

// ptySink is one client's live output. The session closes out when the run
// ends (after the last chunk); the client closes gone when it leaves. A
// slow client slows bash down, as a slow terminal would.
type ptySink struct {
	out   chan ptyChunk
	gone  chan struct{}
	leave sync.Once
}

func newPTYSink() *ptySink {
	return &ptySink{out: make(chan ptyChunk, 16), gone: make(chan struct{})}
}

func (k *ptySink) send(channel byte, p []byte) {
	select {
	case k.out <- ptyChunk{channel, append([]byte(nil), p...)}:
	case <-k.gone:
	}
}
