package execd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// The code-interpreter API runs on a Jupyter server inside the sandbox, as
// on the real execd. Where the real execd is pointed at a Jupyter server the
// image started, osb's starts one itself, on first use, from the programs
// the sandbox sees.

// JupyterEnv names the sandbox environment variable that, when set, is the
// path (inside the sandbox) of the jupyter-server program to run.
const JupyterEnv = "OSB_JUPYTER"

// jupyterFallback is where scripts/code-interpreter-setup installs Jupyter:
// under /opt, which sandboxes see read-only.
var jupyterFallback = "/opt/osb-jupyter/bin/jupyter-server"

// jupyterStart bounds how long the Jupyter server may take to come up (it
// imports a great deal of Python; on a loaded machine that takes a while).
var jupyterStart = 3 * time.Minute

// errNoJupyter says that the sandbox has no Jupyter server to run.
var errNoJupyter = errors.New("no Jupyter server in this sandbox: install jupyter_server and ipykernel where the sandbox sees them " +
	"(" + jupyterFallback + ", a jupyter-server on PATH, or the path in " + JupyterEnv + "); see docs/server.md")

// jupyterServer is the Jupyter server of one sandbox and the code contexts
// made on it.
type jupyterServer struct {
	rn *runner

	mu        sync.Mutex // held while starting, so that one start serves all
	defaultMu sync.Mutex // held while a default context is made
	base      string     // http://127.0.0.1:PORT; "" until started
	token     string
	exited    chan struct{} // closed when the server process ends
	contexts  map[string]*codeContext
	defaults  map[string]string // language → the context of runs that name none
}

// codeContext is one Jupyter session: a kernel of one language.
type codeContext struct {
	ID       string `json:"id"`
	Language string `json:"language"`
	kernelID string
	busy     sync.Mutex // one run at a time, as a kernel runs one cell at a time

	// A kernel ignores SIGINT until it begins a cell: an interrupt of a
	// run sent but not begun waits (pending) for the run to begin.
	mu               sync.Mutex
	waiting, pending bool
}

// sent marks a run's code sent to the kernel and not yet begun.
func (c *codeContext) sent() {
	c.mu.Lock()
	c.waiting, c.pending = true, false
	c.mu.Unlock()
}

// begun marks the run begun (or over); it says whether an interrupt came
// while it waited.
func (c *codeContext) begun() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.waiting && c.pending
	c.waiting, c.pending = false, false
	return p
}

// deferInterrupt keeps an interrupt for a run that has not begun; false
// when none waits, and the kernel is to be interrupted now.
func (c *codeContext) deferInterrupt() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = c.waiting
	return c.waiting
}

func newJupyterServer(rn *runner) *jupyterServer {
	return &jupyterServer{rn: rn, contexts: map[string]*codeContext{}, defaults: map[string]string{}}
}

// program finds the jupyter-server program as the sandbox sees it.
func (j *jupyterServer) program() (string, error) {
	for _, kv := range j.rn.sb.Environ(nil) {
		if v, ok := strings.CutPrefix(kv, JupyterEnv+"="); ok && v != "" {
			if err := j.rn.findProgram(sandbox.CommandSpec{Argv: []string{v}}); err != nil {
				return "", fmt.Errorf("%s=%s: %w", JupyterEnv, v, err)
			}
			return v, nil
		}
	}
	if j.rn.findProgram(sandbox.CommandSpec{Argv: []string{"jupyter-server"}}) == nil {
		return "jupyter-server", nil
	}
	if j.rn.findProgram(sandbox.CommandSpec{Argv: []string{jupyterFallback}}) == nil {
		return jupyterFallback, nil
	}
	return "", errNoJupyter
}

// ensure starts the Jupyter server unless it runs. A server that ended
// took its kernels with it: its contexts are forgotten.
func (j *jupyterServer) ensure() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.runningLocked() {
		return nil
	}
	return j.start()
}

// runningLocked reports whether the server runs, forgetting the contexts
// of one that ended. j.mu is held.
func (j *jupyterServer) runningLocked() bool {
	if j.base == "" {
		return false
	}
	select {
	case <-j.exited:
		j.base = ""
		clear(j.contexts)
		clear(j.defaults)
		return false
	default:
		return true
	}
}

func (j *jupyterServer) start() error {
	prog, err := j.program()
	if err != nil {
		return err
	}
	dir := filepath.Join(j.rn.sb.Dir(), "jupyter")
	token := newCommandID()
	cmd, exited, err := j.launch(prog, dir, token)
	if err != nil {
		return err
	}
	port, err := waitRuntimeFile(filepath.Join(dir, "runtime"), exited)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err == nil {
		err = waitServing(base, token, exited)
	}
	if err != nil {
		cmd.Cancel()
		return fmt.Errorf("the Jupyter server (%s) did not start: %w%s", prog, err, logTail(filepath.Join(dir, "server.log")))
	}
	j.base, j.token, j.exited = base, token, exited
	return nil
}

// launch starts the Jupyter server with its state in dir (made afresh);
// exited is closed when it ends.
func (j *jupyterServer) launch(prog, dir, token string) (*exec.Cmd, chan struct{}, error) {
	os.RemoveAll(dir)
	runtimeDir := filepath.Join(dir, "runtime")
	if err := os.MkdirAll(runtimeDir, 0o700); err != nil {
		return nil, nil, err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close()
	// Port 0: the server picks a free port and names it in its runtime
	// file. Its own config directory, so that no configuration of the
	// sandbox's user (a password, another port) gets in the way.
	cmd, err := j.rn.sb.Command(context.Background(), sandbox.CommandSpec{
		Argv: []string{prog, "--allow-root", "--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0"},
		Env: map[string]string{
			"JUPYTER_TOKEN":       token,
			"JUPYTER_RUNTIME_DIR": runtimeDir,
			"JUPYTER_CONFIG_DIR":  filepath.Join(dir, "config"),
		},
	})
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := j.rn.sb.StartCommand(cmd); err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", prog, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	return cmd, exited, nil
}

// waitServing waits until the server answers its API: it names its port
// a moment before it serves on it.
func waitServing(base, token string, exited <-chan struct{}) error {
	deadline := time.Now().Add(jupyterStart)
	for {
		err := callJupyter(base, token, http.MethodGet, "/api/status", nil, nil)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("it exited")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// waitRuntimeFile waits for the file in which a started Jupyter server
// names its port.
func waitRuntimeFile(dir string, exited <-chan struct{}) (int, error) {
	deadline := time.Now().Add(jupyterStart)
	for {
		names, _ := filepath.Glob(filepath.Join(dir, "jpserver-*.json"))
		for _, name := range names {
			var info struct {
				Port int `json:"port"`
			}
			if b, err := os.ReadFile(name); err == nil && json.Unmarshal(b, &info) == nil && info.Port > 0 {
				return info.Port, nil
			}
		}
		select {
		case <-exited:
			return 0, errors.New("it exited")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("it named no port within %s", jupyterStart)
		}
	}
}

// logTail is the end of the server's log, to say why it failed.
func logTail(name string) string {
	b, _ := os.ReadFile(name)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	if len(lines) == 0 || lines[0] == "" {
		return ""
	}
	return ": " + strings.Join(lines, " | ")
}

// call sends one request of Jupyter's REST API and decodes its answer.
func (j *jupyterServer) call(method, p string, body, out any) error {
	base, token := j.endpoint()
	if base == "" {
		return errors.New("the Jupyter server is not running")
	}
	return callJupyter(base, token, method, p, body, out)
}

// endpoint is where the server is and its token; "" when it is not running.
func (j *jupyterServer) endpoint() (base, token string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.base, j.token
}

func callJupyter(base, token, method, p string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+p, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the Jupyter server: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var e struct {
			Message string `json:"message"`
		}
		json.Unmarshal(data, &e)
		return fmt.Errorf("the Jupyter server answered %s %s with %s: %s", method, p, resp.Status, e.Message)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// errNoKernel: the sandbox has Jupyter but no kernel for the language.
type errNoKernel struct{ language, have string }

func (e errNoKernel) Error() string {
	return fmt.Sprintf("no Jupyter kernel for language %s in this sandbox (kernels for: %s)", e.language, e.have)
}

// kernelFor names the kernel spec of a language: the default one when it
// fits, else the first by name.
func (j *jupyterServer) kernelFor(language string) (string, error) {
	var specs struct {
		Default     string `json:"default"`
		Kernelspecs map[string]struct {
			Spec struct {
				Language string `json:"language"`
			} `json:"spec"`
		} `json:"kernelspecs"`
	}
	if err := j.call(http.MethodGet, "/api/kernelspecs", nil, &specs); err != nil {
		return "", err
	}
	var names, have []string
	for name, s := range specs.Kernelspecs {
		have = append(have, strings.ToLower(s.Spec.Language))
		if strings.EqualFold(s.Spec.Language, language) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if n == specs.Default {
			return n, nil
		}
	}
	if len(names) == 0 {
		sort.Strings(have)
		return "", errNoKernel{language, strings.Join(have, ", ")}
	}
	return names[0], nil
}

// create starts a kernel of the language in a new Jupyter session, whose
// id names the context (as on the real execd). cwd is the kernel's working
// directory, relative to /workspace where the Jupyter server runs.
func (j *jupyterServer) create(language, cwd string) (*codeContext, error) {
	if err := j.ensure(); err != nil {
		return nil, err
	}
	kernel, err := j.kernelFor(language)
	if err != nil {
		return nil, err
	}
	var session struct {
		ID     string `json:"id"`
		Kernel struct {
			ID string `json:"id"`
		} `json:"kernel"`
	}
	body := map[string]any{"path": path.Join(cwd, newCommandID()+".ipynb"), "type": "notebook", "name": "", "kernel": map[string]string{"name": kernel}}
	if err := j.call(http.MethodPost, "/api/sessions", body, &session); err != nil {
		return nil, err
	}
	c := &codeContext{ID: session.ID, Language: language, kernelID: session.Kernel.ID}
	j.mu.Lock()
	j.contexts[c.ID] = c
	j.mu.Unlock()
	return c, nil
}

// defaultContext is the context of the runs of a language that name none,
// made on first use.
func (j *jupyterServer) defaultContext(language string) (*codeContext, error) {
	// One default context per language, however many runs ask at once.
	j.defaultMu.Lock()
	defer j.defaultMu.Unlock()
	j.mu.Lock()
	c := j.contexts[j.defaults[language]]
	j.mu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := j.create(language, "")
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	j.defaults[language] = c.ID
	j.mu.Unlock()
	return c, nil
}

func (j *jupyterServer) lookup(id string) *codeContext {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.runningLocked()
	return j.contexts[id]
}

// list returns the contexts of a language ("" for all), oldest id first.
func (j *jupyterServer) list(language string) []*codeContext {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.runningLocked()
	out := []*codeContext{}
	for _, c := range j.contexts {
		if language == "" || c.Language == language {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// remove shuts a context's kernel down and forgets it.
func (j *jupyterServer) remove(c *codeContext) error {
	j.mu.Lock()
	delete(j.contexts, c.ID)
	for lang, id := range j.defaults {
		if id == c.ID {
			delete(j.defaults, lang)
		}
	}
	j.mu.Unlock()
	return j.call(http.MethodDelete, "/api/sessions/"+c.ID, nil, nil)
}

func (j *jupyterServer) interrupt(c *codeContext) error {
	return j.call(http.MethodPost, "/api/kernels/"+c.kernelID+"/interrupt", nil, nil)
}

// kernelMessage is a message of the Jupyter messaging protocol as the
// server's websocket carries it (JSON, one message a frame).
type kernelMessage struct {
	Header   kernelHeader    `json:"header"`
	Parent   kernelHeader    `json:"parent_header"`
	Metadata map[string]any  `json:"metadata"`
	Content  json.RawMessage `json:"content"`
	Channel  string          `json:"channel"`
	Buffers  []any           `json:"buffers"`
}

type kernelHeader struct {
	MsgID    string `json:"msg_id,omitempty"`
	MsgType  string `json:"msg_type,omitempty"`
	Session  string `json:"session,omitempty"`
	Username string `json:"username,omitempty"`
	Date     string `json:"date,omitempty"`
	Version  string `json:"version,omitempty"`
}

// kernelConn is a websocket to a kernel's channels.
type kernelConn struct {
	conn    *websocket.Conn
	session string
	msgs    chan kernelMessage
	err     error         // why msgs was closed
	done    chan struct{} // closed by close: nobody reads msgs any more
}

func (j *jupyterServer) connect(ctx context.Context, c *codeContext) (*kernelConn, error) {
	session := newSessionID()
	base, token := j.endpoint()
	u := "ws" + strings.TrimPrefix(base, "http") + "/api/kernels/" + c.kernelID + "/channels?session_id=" + session
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"token " + token}}})
	if err != nil {
		return nil, fmt.Errorf("connecting to the kernel: %w", err)
	}
	conn.SetReadLimit(256 << 20) // a result may carry a large image
	kc := &kernelConn{conn: conn, session: session, msgs: make(chan kernelMessage, 64), done: make(chan struct{})}
	go kc.read()
	return kc, nil
}

func (kc *kernelConn) read() {
	defer close(kc.msgs)
	for {
		_, data, err := kc.conn.Read(context.Background())
		if err != nil {
			kc.err = err
			return
		}
		var m kernelMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		select {
		case kc.msgs <- m:
		case <-kc.done:
			return
		}
	}
}

// execute sends an execute_request and returns its message id.
func (kc *kernelConn) execute(ctx context.Context, code string) (string, error) {
	content, _ := json.Marshal(map[string]any{
		"code": code, "silent": false, "store_history": true,
		"user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": true,
	})
	id := newCommandID()
	m := kernelMessage{
		Header: kernelHeader{MsgID: id, MsgType: "execute_request", Session: kc.session, Username: "osb",
			Date: time.Now().UTC().Format(time.RFC3339Nano), Version: "5.3"},
		Metadata: map[string]any{}, Content: content, Channel: "shell", Buffers: []any{},
	}
	b, _ := json.Marshal(m)
	return id, kc.conn.Write(ctx, websocket.MessageText, b)
}

func (kc *kernelConn) close() {
	close(kc.done)
	kc.conn.Close(websocket.StatusNormalClosure, "")
}

// RuntimePort is where the code-interpreter image serves Jupyter, and where
// the official SDKs look, inside the sandbox, to tell that the interpreter
// is there (JUPYTER_PORT overrides it).
const RuntimePort = 44771

// serveRuntimePort listens on RuntimePort inside the sandbox, when the
// sandbox has Jupyter: a connection starts the Jupyter server (so a probe
// of the port also warms it up) and is passed through to it. Only the
// agent does this: in a sandbox without its own network the port would be
// the host's.
func (j *jupyterServer) serveRuntimePort() {
	if !j.rn.sb.InAgent() {
		return
	}
	if _, err := j.program(); err != nil {
		return
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", RuntimePort))
	if err != nil {
		return
	}
	go func() {
		<-j.rn.sb.Done()
		ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go j.passThrough(conn)
	}
}

// passThrough joins a connection to the Jupyter server, started if need be.
func (j *jupyterServer) passThrough(conn net.Conn) {
	defer conn.Close()
	if j.ensure() != nil {
		return
	}
	base, _ := j.endpoint()
	addr := strings.TrimPrefix(base, "http://")
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		io.Copy(up, conn)
		up.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(conn, up)
}
