package execd

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// The code-interpreter API (/code…): contexts are Jupyter sessions of the
// sandbox's Jupyter server (jupyter.go); runs stream what the kernel says.

// kernelLanguages are the languages execd runs on Jupyter kernels.
var kernelLanguages = map[string]bool{"python": true, "bash": true, "java": true, "javascript": true, "typescript": true, "go": true}

// nonContextLanguages run without a kernel; they have no contexts.
var nonContextLanguages = map[string]bool{"command": true, "background-command": true, "sql": true}

func (rn *runner) codeRoutes(mux *http.ServeMux) {
	j := newJupyterServer(rn)
	go j.serveRuntimePort()
	mux.HandleFunc("POST /code", j.runCode)
	mux.HandleFunc("DELETE /code", j.interruptCode)
	mux.HandleFunc("POST /code/context", j.createContext)
	mux.HandleFunc("GET /code/contexts", j.listContexts)
	mux.HandleFunc("DELETE /code/contexts", j.deleteLanguage)
	mux.HandleFunc("GET /code/contexts/{id}", j.getContext)
	mux.HandleFunc("DELETE /code/contexts/{id}", j.deleteContext)
}

// CodeContextRequest is the body of POST /code/context.
type CodeContextRequest struct {
	Language string `json:"language"`
	Cwd      string `json:"cwd"`
}

// RunCodeRequest is the body of POST /code.
type RunCodeRequest struct {
	Context struct {
		ID       string `json:"id"`
		Language string `json:"language"`
	} `json:"context"`
	Code string `json:"code"`
}

// codeFrame is one event of a code run; zero fields are left out as execd
// leaves them out.
type codeFrame struct {
	Type           string         `json:"type"`
	Text           string         `json:"text,omitempty"`
	ExecutionCount int            `json:"execution_count,omitempty"`
	ExecutionTime  int64          `json:"execution_time,omitempty"`
	Timestamp      int64          `json:"timestamp"`
	Results        map[string]any `json:"results,omitempty"`
	Error          *frameError    `json:"error,omitempty"`
}

func (es *eventStream) sendCode(f codeFrame) {
	f.Timestamp = time.Now().UnixMilli()
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	es.write(append(b, '\n', '\n'))
}

func contextNotFound(w http.ResponseWriter, id string) {
	writeError(w, http.StatusNotFound, codeNoContext, "context "+id+" not found")
}

// jupyterFailure answers an error of starting Jupyter or a kernel: the
// sandbox lacking a kernel for the language is the request's fault (400),
// anything else the sandbox's (500). prefix is execd's wording of the step.
func jupyterFailure(w http.ResponseWriter, prefix string, err error) {
	var nk errNoKernel
	if errors.As(err, &nk) {
		badRequest(w, err.Error())
		return
	}
	if errors.Is(err, errNoJupyter) && prefix == "error running codes " {
		// The real execd's words for a sandbox without Jupyter, then ours.
		prefix += "language runtime server not configured: "
	}
	writeError(w, http.StatusInternalServerError, codeRuntime, prefix+err.Error())
}

func (j *jupyterServer) createContext(w http.ResponseWriter, r *http.Request) {
	var req CodeContextRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badRequest(w, "error parsing request, MAYBE invalid body format. "+err.Error())
		return
	}
	switch {
	case req.Language == "":
		badRequest(w, "invalid request, validation error language is required")
		return
	case nonContextLanguages[req.Language]:
		badRequest(w, "unsupported language context operation: "+req.Language)
		return
	case !kernelLanguages[req.Language]:
		badRequest(w, "unknown language: "+req.Language)
		return
	}
	dir, msg := j.contextDir(req.Cwd)
	if msg != "" {
		badRequest(w, "invalid request, validation error "+msg)
		return
	}
	c, err := j.create(req.Language, dir)
	if err != nil {
		jupyterFailure(w, "error creating code context. ", err)
		return
	}
	out := map[string]string{"id": c.ID, "language": c.Language}
	if req.Cwd != "" {
		out["cwd"] = req.Cwd // echoed, as the real execd echoes the request
	}
	writeJSON(w, http.StatusOK, out)
}

// contextDir is a context's working directory relative to /workspace,
// where the Jupyter server runs; it is made when missing.
func (j *jupyterServer) contextDir(cwd string) (string, string) {
	if cwd == "" {
		return "", ""
	}
	p, err := j.rn.expandDir(cwd, nil)
	if err != nil {
		return "", err.Error()
	}
	rel, ok := strings.CutPrefix(p, "/workspace")
	if !ok || (rel != "" && rel[0] != '/') {
		return "", "the working directory of a code context must be under /workspace: " + cwd
	}
	rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
	if name, err := j.rn.sb.ResolvePath(p); err == nil {
		if err := j.rn.sb.FS().MkdirAll(name, 0o755); err != nil {
			return "", err.Error()
		}
	}
	return rel, ""
}

func (j *jupyterServer) listContexts(w http.ResponseWriter, r *http.Request) {
	language := r.URL.Query().Get("language")
	if nonContextLanguages[language] {
		writeError(w, http.StatusInternalServerError, codeRuntime, "unsupported language context operation: "+language)
		return
	}
	writeJSON(w, http.StatusOK, j.list(language))
}

func (j *jupyterServer) getContext(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c := j.lookup(id)
	if c == nil {
		contextNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (j *jupyterServer) deleteContext(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c := j.lookup(id)
	if c == nil {
		contextNotFound(w, id)
		return
	}
	if err := j.remove(c); err != nil {
		writeError(w, http.StatusInternalServerError, codeRuntime, "error deleting code context "+id+". "+err.Error())
	}
}

func (j *jupyterServer) deleteLanguage(w http.ResponseWriter, r *http.Request) {
	language := r.URL.Query().Get("language")
	if language == "" {
		writeError(w, http.StatusBadRequest, codeNoQuery, "missing query parameter 'language'")
		return
	}
	for _, c := range j.list(language) {
		if err := j.remove(c); err != nil {
			writeError(w, http.StatusInternalServerError, codeRuntime, "error deleting code context "+language+". "+err.Error())
			return
		}
	}
}

// interruptCode interrupts a context's kernel; any other id is a command's
// or a bash session's, as DELETE /command takes them.
func (j *jupyterServer) interruptCode(w http.ResponseWriter, r *http.Request) {
	c := j.lookup(r.URL.Query().Get("id"))
	if c == nil {
		j.rn.interrupt(w, r)
		return
	}
	if c.deferInterrupt() {
		return
	}
	if err := j.interrupt(c); err != nil {
		writeError(w, http.StatusInternalServerError, codeRuntime, "error interruptting code context. "+err.Error())
	}
}

func (j *jupyterServer) runCode(w http.ResponseWriter, r *http.Request) {
	var req RunCodeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badRequest(w, "error parsing request, MAYBE invalid body format. "+err.Error())
		return
	}
	if req.Code == "" {
		badRequest(w, "invalid request, validation error Key: 'RunCodeRequest.Code' Error:Field validation for 'Code' failed on the 'required' tag")
		return
	}
	switch lang := req.Context.Language; {
	case lang == "" && req.Context.ID != "":
		// A context alone names its language (the real execd would run
		// the code as a shell command).
	case lang == "" || lang == "command" || lang == "background-command":
		// Without a kernel the code is a shell command, streamed as
		// POST /command streams it but with no tail.
		j.rn.execute(w, r, &RunCommandRequest{Command: req.Code, Background: lang == "background-command"}, 0)
		return
	case lang == "sql":
		badRequest(w, "error running codes sql is not supported by osb server (it has no database)")
		return
	case !kernelLanguages[lang] && req.Context.ID == "":
		badRequest(w, "error running codes unknown language: "+lang)
		return
	}
	var c *codeContext
	release := func() {}
	if id := req.Context.ID; id != "" {
		if c = j.lookup(id); c == nil {
			contextNotFound(w, id)
			return
		}
		if !c.busy.TryLock() {
			writeError(w, http.StatusInternalServerError, codeRuntime, "error running codes session is busy")
			return
		}
		release = sync.OnceFunc(c.busy.Unlock)
	} else if _, err := j.program(); err != nil {
		jupyterFailure(w, "error running codes ", err)
		return
	}
	defer func() { release() }()
	// The answer starts now: what follows (a Jupyter server and a kernel
	// to start) may take longer than a client waits for headers. Pings
	// go out meanwhile; a failure is execd's bare error object.
	es := newEventStream(w)
	es.ping()
	prep := make(chan *preparedRun, 1)
	go func() { prep <- j.prepare(c, release, &req) }()
	tick := time.NewTicker(pingInterval)
	defer tick.Stop()
	for {
		select {
		case p := <-prep:
			release = p.release
			if p.err != nil {
				es.serverError("error running codes " + p.err.Error())
				return
			}
			defer p.kc.close()
			j.stream(es, r, p.c, p.kc, p.msgID, p.release)
			return
		case <-tick.C:
			es.ping()
		case <-r.Context().Done():
			// Nobody reads the run: whatever prepare made is undone.
			go func() {
				if p := <-prep; p.err == nil {
					p.c.begun()
					p.kc.close()
					p.release()
				}
			}()
			release = func() {}
			return
		}
	}
}

// preparedRun is a run sent to its kernel: its context (busy until
// release), the channels it answers on and its request id.
type preparedRun struct {
	c       *codeContext
	kc      *kernelConn
	msgID   string
	release func()
	err     error
}

// prepare makes a run ready: the language's default context when c is
// nil (locking it, else c is locked already), a connection to its kernel,
// the code sent.
func (j *jupyterServer) prepare(c *codeContext, release func(), req *RunCodeRequest) *preparedRun {
	p := &preparedRun{c: c, release: release}
	if c == nil {
		var err error
		if p.c, err = j.defaultContext(req.Context.Language); err != nil {
			p.err = err
			return p
		}
		if !p.c.busy.TryLock() {
			p.err = errors.New("session is busy")
			return p
		}
		p.release = sync.OnceFunc(p.c.busy.Unlock)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if p.kc, p.err = j.connect(ctx, p.c); p.err != nil {
		p.release()
		return p
	}
	p.c.sent()
	if p.msgID, p.err = p.kc.execute(ctx, req.Code); p.err != nil {
		p.c.begun()
		p.kc.close()
		p.release()
	}
	return p
}

// serverError ends a stream as execd ends one that failed after it began:
// a bare {"code","message"} object.
func (es *eventStream) serverError(message string) {
	b, _ := json.Marshal(map[string]string{"code": codeRuntime, "message": message})
	es.write(b)
}

// kernelReply is the content of the kernel messages a run reads.
type kernelReply struct {
	Name           string         `json:"name"` // stream: stdout or stderr
	Text           string         `json:"text"`
	ExecutionCount int            `json:"execution_count"`
	Data           map[string]any `json:"data"`
	Status         string         `json:"status"` // execute_reply: ok, error, aborted
	State          string         `json:"execution_state"`
	EName          string         `json:"ename"`
	EValue         string         `json:"evalue"`
	Traceback      []string       `json:"traceback"`
}

// run is the state of one streamed run.
type run struct {
	es            *eventStream
	counted, idle bool
	replied       bool
	count         int         // from the kernel's reply
	failure       *frameError // the code's error, sent last
	release       func()      // frees the context for the next run
}

// stream relays what the kernel says about the request msgID until it is
// idle again and has replied: init (the context's id, which DELETE /code
// takes), output, results, then the error or execution_complete.
func (j *jupyterServer) stream(es *eventStream, r *http.Request, c *codeContext, kc *kernelConn, msgID string, release func()) {
	started := time.Now()
	// Whether it had begun is cleared before the context is free for the
	// next run, which marks its own.
	run := &run{es: es, release: func() { c.begun(); release() }}
	run.es.sendCode(codeFrame{Type: "init", Text: c.ID})
	tick := time.NewTicker(pingInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			// The client left: stop the code, as the real execd does.
			c.begun()
			j.interrupt(c)
			return
		case <-tick.C:
			run.es.ping()
		case m, ok := <-kc.msgs:
			if !ok {
				run.fail("KernelDied", "the connection to the kernel was lost: "+errText(kc.err))
				return
			}
			var reply kernelReply
			json.Unmarshal(m.Content, &reply)
			if m.Header.MsgType == "status" && (reply.State == "restarting" || reply.State == "dead") {
				run.fail("KernelDied", "the kernel of context "+c.ID+" died; Jupyter restarted it ("+reply.State+") and its state is lost")
				return
			}
			if m.Parent.MsgID != msgID {
				continue
			}
			// Any message of the run but its status comes once the
			// kernel has begun it, and so takes SIGINT.
			if m.Header.MsgType != "status" && c.begun() {
				j.interrupt(c)
			}
			run.handle(m.Header.MsgType, &reply)
			if run.idle && run.replied {
				run.finish(time.Since(started))
				return
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

func (run *run) handle(msgType string, m *kernelReply) {
	switch msgType {
	case "stream":
		if (m.Name == "stdout" || m.Name == "stderr") && m.Text != "" {
			run.es.sendCode(codeFrame{Type: m.Name, Text: m.Text})
		}
	case "execute_result":
		// As on the real execd: the count, then the value.
		run.sendCount(m.ExecutionCount)
		run.es.sendCode(codeFrame{Type: "result", Results: mimeBundle(m.Data), ExecutionCount: m.ExecutionCount})
	case "display_data":
		run.es.sendCode(codeFrame{Type: "result", Results: mimeBundle(m.Data)})
	case "error":
		run.failure = newFrameError(m.EName, m.EValue, m.Traceback)
	case "execute_reply":
		run.replied, run.count = true, m.ExecutionCount
		switch {
		case run.failure != nil:
		case m.Status == "error":
			run.failure = newFrameError(m.EName, m.EValue, m.Traceback)
		case m.Status == "aborted":
			run.failure = newFrameError("ExecutionAborted", "the kernel aborted the execution", nil)
		}
	case "status":
		run.idle = run.idle || m.State == "idle"
	}
}

// finish ends a run that the kernel is done with: its count (when no
// result sent it), then its error, or execution_complete.
func (run *run) finish(took time.Duration) {
	run.sendCount(run.count)
	run.release()
	if run.failure != nil {
		run.es.sendCode(codeFrame{Type: "error", Error: run.failure})
		return
	}
	run.es.sendCode(codeFrame{Type: "execution_complete", ExecutionTime: took.Milliseconds()})
}

// sendCount sends the execution count once per run.
func (run *run) sendCount(n int) {
	if n > 0 && !run.counted {
		run.counted = true
		run.es.sendCode(codeFrame{Type: "execution_count", ExecutionCount: n})
	}
}

// fail ends a run that went wrong outside the code (the kernel died).
func (run *run) fail(name, value string) {
	run.release()
	run.es.sendCode(codeFrame{Type: "error", Error: newFrameError(name, value, nil)})
}

func newFrameError(name, value string, traceback []string) *frameError {
	if traceback == nil {
		traceback = []string{}
	}
	return &frameError{Name: name, Value: value, Traceback: traceback}
}

// mimeBundle is a kernel's data as execd sends it: text/plain under "text",
// every other MIME type under its own name.
func mimeBundle(data map[string]any) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		if k == "text/plain" {
			k = "text"
		}
		out[k] = v
	}
	return out
}
