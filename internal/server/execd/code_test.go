//go:build linux

package execd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// needJupyter skips a test when this machine has no Jupyter for sandboxes.
func needJupyter(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(jupyterFallback); err == nil {
		return
	}
	if _, err := exec.LookPath("jupyter-server"); err == nil {
		return
	}
	t.Skip("no Jupyter for sandboxes here; scripts/code-interpreter-setup installs it into /opt/osb-jupyter")
}

// codeRun posts a run and reads its stream to the end, within a deadline.
func codeRun(t *testing.T, url string, body any, onEvent func(*client.Event)) []*client.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/code", strings.NewReader(string(b)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []*client.Event
	for _, ev := range readEvents(t, resp, onEvent) {
		if ev.Type != client.EventPing {
			evs = append(evs, ev)
		}
	}
	return evs
}

// render shows a run's events one a line: type, then what it carries.
// Consecutive output of one stream is one line: how a kernel cuts its
// output into messages depends on its timing (ipykernel sends what a
// write left after 0.2s, so a print under load may come in two parts).
func render(evs []*client.Event) string {
	var b strings.Builder
	for i := 0; i < len(evs); i++ {
		ev := evs[i]
		switch ev.Type {
		case client.EventInit, client.EventComplete:
			b.WriteString(ev.Type)
		case client.EventStdout, client.EventStderr:
			data := string(ev.Data)
			for i+1 < len(evs) && evs[i+1].Type == ev.Type {
				i++
				data += string(evs[i].Data)
			}
			fmt.Fprintf(&b, "%s %q", ev.Type, data)
		case client.EventCount:
			fmt.Fprintf(&b, "%s %d", ev.Type, ev.ExecutionCount)
		case client.EventResult:
			fmt.Fprintf(&b, "%s %s", ev.Type, ev.Results)
		case client.EventError, client.EventServerError:
			fmt.Fprintf(&b, "%s %s: %s", ev.Type, ev.Error.Name, ev.Error.Value)
		default:
			b.WriteString(ev.Type + " " + ev.Text)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func createContext(t *testing.T, url, language string) string {
	t.Helper()
	r := call(t, "POST", url+"/code/context", map[string]string{"language": language})
	var c struct{ ID, Language string }
	if err := json.Unmarshal([]byte(r.body), &c); r.status != 200 || err != nil || c.ID == "" || c.Language != language {
		t.Fatalf("create context: %d %s", r.status, r.body)
	}
	return c.ID
}

func TestCodeInterpreter(t *testing.T) {
	t.Parallel() // the two longest tests here (Python kernels starting): side by side
	needJupyter(t)
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		id := createContext(t, url, "python")
		if r := call(t, "GET", url+"/code/contexts/"+id, nil); r.status != 200 || r.body != `{"id":"`+id+`","language":"python"}`+"\n" {
			t.Errorf("get context: %d %s", r.status, r.body)
		}
		ctx := map[string]string{"id": id, "language": "python"}

		// State stays between runs; a value comes back as its MIME
		// bundle, text/plain under "text".
		if got := render(codeRun(t, url, map[string]any{"context": ctx, "code": "x = 41\nprint('hi'); import sys; print('oops', file=sys.stderr)"}, nil)); got !=
			"init\nstdout \"hi\\n\"\nstderr \"oops\\n\"\nexecution_count 1\nexecution_complete\n" {
			t.Errorf("first run:\n%s", got)
		}
		if got := render(codeRun(t, url, map[string]any{"context": ctx, "code": "x + 1"}, nil)); got !=
			"init\nexecution_count 2\nresult {\"text\":\"42\"}\nexecution_complete\n" {
			t.Errorf("second run:\n%s", got)
		}
		// An exception is the run's last event: no execution_complete.
		evs := codeRun(t, url, map[string]any{"context": ctx, "code": "1/0"}, nil)
		if got := render(evs); got != "init\nexecution_count 3\nerror ZeroDivisionError: division by zero\n" {
			t.Errorf("failing run:\n%s", got)
		}
		if tb := evs[len(evs)-1].Error.Traceback; len(tb) == 0 || !strings.Contains(strings.Join(tb, "\n"), "ZeroDivisionError") {
			t.Errorf("traceback %q", tb)
		}

		// A run that never ends is interrupted by DELETE /code?id=, once
		// all it prints first has come: interrupted inside its print, the
		// run would end without the rest of the line.
		var out string
		evs = codeRun(t, url, map[string]any{"context": ctx, "code": "import time\nprint('looping', flush=True)\nwhile True: time.sleep(0.05)"}, func(ev *client.Event) {
			if ev.Type != client.EventStdout {
				return
			}
			if out += string(ev.Data); out == "looping\n" {
				if r := call(t, "DELETE", url+"/code?id="+id, nil); r.status != 200 || r.body != "" {
					t.Errorf("interrupt: %d %s", r.status, r.body)
				}
			}
		})
		if got := render(evs); got != "init\nstdout \"looping\\n\"\nexecution_count 4\nerror KeyboardInterrupt: \n" {
			t.Errorf("interrupted run:\n%s", got)
		}
		if got := render(codeRun(t, url, map[string]any{"context": ctx, "code": "x"}, nil)); got !=
			"init\nexecution_count 5\nresult {\"text\":\"41\"}\nexecution_complete\n" {
			t.Errorf("run after the interrupt:\n%s", got)
		}
		// Interrupted as soon as it is named, before the kernel has begun
		// it (a kernel ignores SIGINT between cells), the run still stops.
		evs = codeRun(t, url, map[string]any{"context": ctx, "code": "import time\ntime.sleep(5)\nprint('not interrupted')"}, func(ev *client.Event) {
			if ev.Type == client.EventInit {
				if r := call(t, "DELETE", url+"/code?id="+id, nil); r.status != 200 || r.body != "" {
					t.Errorf("interrupt: %d %s", r.status, r.body)
				}
			}
		})
		if got := render(evs); got != "init\nexecution_count 6\nerror KeyboardInterrupt: \n" {
			t.Errorf("run interrupted before it began:\n%s", got)
		}

		// A kernel that dies is reported; a new context works.
		if got := render(codeRun(t, url, map[string]any{"context": ctx, "code": "import os; os._exit(1)"}, nil)); !strings.HasPrefix(got, "init\nerror KernelDied: ") {
			t.Errorf("dying kernel:\n%s", got)
		}
		other := createContext(t, url, "python")
		if got := render(codeRun(t, url, map[string]any{"context": map[string]string{"id": other}, "code": "6 * 7"}, nil)); got !=
			"init\nexecution_count 1\nresult {\"text\":\"42\"}\nexecution_complete\n" {
			t.Errorf("new context:\n%s", got)
		}

		// Without a context id, a language's default context runs it.
		if got := render(codeRun(t, url, map[string]any{"context": map[string]string{"language": "python"}, "code": "'default'"}, nil)); got !=
			"init\nexecution_count 1\nresult {\"text\":\"'default'\"}\nexecution_complete\n" {
			t.Errorf("default context:\n%s", got)
		}
		var listed []struct{ ID, Language string }
		r := call(t, "GET", url+"/code/contexts?language=python", nil)
		if json.Unmarshal([]byte(r.body), &listed); r.status != 200 || len(listed) != 3 {
			t.Errorf("list: %d %s", r.status, r.body)
		}
		// A context's kernel starts in its cwd, made when missing.
		r = call(t, "POST", url+"/code/context", map[string]string{"language": "python", "cwd": "/workspace/proj"})
		var inDir struct{ ID, Cwd string }
		if json.Unmarshal([]byte(r.body), &inDir); r.status != 200 || inDir.Cwd != "/workspace/proj" {
			t.Fatalf("create with cwd: %d %s", r.status, r.body)
		}
		got := render(codeRun(t, url, map[string]any{"context": map[string]string{"id": inDir.ID}, "code": "import os; os.getcwd()"}, nil))
		// Without namespaces the kernel sees the host's path of the directory.
		if !regexp.MustCompile(`^init\nexecution_count 1\nresult \{"text":"'(/.*)?/workspace/proj'"\}\nexecution_complete\n$`).MatchString(got) ||
			sb.Isolated() && !strings.Contains(got, `"'/workspace/proj'"`) {
			t.Errorf("cwd:\n%s", got)
		}
		if sb.Isolated() {
			// Where the SDKs probe for the interpreter, something listens.
			if s := summarize(events(t, url+"/command", map[string]string{"command": "exec 3<>/dev/tcp/127.0.0.1/44771"})); s.end != "execution_complete" {
				t.Errorf("port 44771: %+v", s)
			}
		}
		if r := call(t, "DELETE", url+"/code/contexts/"+id, nil); r.status != 200 || r.body != "" {
			t.Errorf("delete: %d %s", r.status, r.body)
		}
		if r := call(t, "GET", url+"/code/contexts/"+id, nil); r.status != 404 || r.body != `{"code":"CONTEXT_NOT_FOUND","message":"context `+id+` not found"}`+"\n" {
			t.Errorf("get deleted: %d %s", r.status, r.body)
		}
		if r := call(t, "DELETE", url+"/code/contexts?language=python", nil); r.status != 200 {
			t.Errorf("delete all: %d %s", r.status, r.body)
		}
		if r := call(t, "GET", url+"/code/contexts", nil); r.status != 200 || r.body != "[]\n" {
			t.Errorf("list after delete all: %d %s", r.status, r.body)
		}
	})
}

// TestCodeRequestErrors: what is wrong with a request is said before any
// Jupyter starts, in execd's shape.
func TestCodeRequestErrors(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := httptest.NewServer(New(sb, Options{}))
	t.Cleanup(srv.Close)
	url := srv.URL
	cases := []struct {
		method, path string
		body         any
		status       int
		want         string
	}{
		{"POST", "/code/context", map[string]string{"language": "cobol"}, 400, `{"code":"INVALID_REQUEST_BODY","message":"unknown language: cobol"}`},
		{"POST", "/code/context", map[string]string{"language": "command"}, 400, `{"code":"INVALID_REQUEST_BODY","message":"unsupported language context operation: command"}`},
		{"POST", "/code/context", map[string]string{"language": "python", "cwd": "/etc"}, 400, `{"code":"INVALID_REQUEST_BODY","message":"invalid request, validation error the working directory of a code context must be under /workspace: /etc"}`},
		{"POST", "/code", map[string]any{"context": map[string]string{"language": "cobol"}, "code": "x"}, 400, `{"code":"INVALID_REQUEST_BODY","message":"error running codes unknown language: cobol"}`},
		{"POST", "/code", map[string]any{"context": map[string]string{"id": "nope", "language": "python"}, "code": "x"}, 404, `{"code":"CONTEXT_NOT_FOUND","message":"context nope not found"}`},
		{"POST", "/code", map[string]any{"context": map[string]string{"language": "python"}}, 400, `{"code":"INVALID_REQUEST_BODY","message":"invalid request, validation error Key: 'RunCodeRequest.Code' Error:Field validation for 'Code' failed on the 'required' tag"}`},
		{"GET", "/code/contexts/nope", nil, 404, `{"code":"CONTEXT_NOT_FOUND","message":"context nope not found"}`},
		{"DELETE", "/code/contexts/nope", nil, 404, `{"code":"CONTEXT_NOT_FOUND","message":"context nope not found"}`},
		{"DELETE", "/code/contexts", nil, 400, `{"code":"MISSING_QUERY","message":"missing query parameter 'language'"}`},
		{"GET", "/code/contexts?language=command", nil, 500, `{"code":"RUNTIME_ERROR","message":"unsupported language context operation: command"}`},
		{"GET", "/code/contexts?language=python", nil, 200, `[]`},
		{"DELETE", "/code?id=nope", nil, 500, `{"code":"RUNTIME_ERROR","message":"error interruptting code context. no such session"}`},
	}
	for _, c := range cases {
		r := call(t, c.method, url+c.path, c.body)
		if r.status != c.status || r.body != c.want+"\n" {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, r.status, r.body, c.status, c.want)
		}
	}
	// With no language the code is a shell command.
	if got := render(codeRun(t, url, map[string]any{"code": "echo hi; exit 3"}, nil)); got != "init\nstdout \"hi\"\nerror CommandExecError: 3\n" {
		t.Errorf("command mode:\n%s", got)
	}
}

// TestCodeWithoutJupyter: a sandbox without Jupyter says so. Not parallel:
// it hides Jupyter from the whole process (a package variable and PATH).
func TestCodeWithoutJupyter(t *testing.T) {
	sb, err := sandbox.New(sandbox.Config{ID: newCommandID(), Dir: t.TempDir() + "/sb", Env: map[string]string{JupyterEnv: "/nonexistent/jupyter-server"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Start([]string{"sleep", "300"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Remove() })
	srv := httptest.NewServer(New(sb, Options{}))
	t.Cleanup(srv.Close)
	r := call(t, "POST", srv.URL+"/code/context", map[string]string{"language": "python"})
	if want := `{"code":"RUNTIME_ERROR","message":"error creating code context. OSB_JUPYTER=/nonexistent/jupyter-server: fork/exec /nonexistent/jupyter-server: no such file or directory"}` + "\n"; r.status != 500 || r.body != want {
		t.Errorf("create: %d %s", r.status, r.body)
	}
	jupyterProgramsHidden(t)
	sb2 := newSandbox(t)
	srv2 := httptest.NewServer(New(sb2, Options{}))
	t.Cleanup(srv2.Close)
	r = call(t, "POST", srv2.URL+"/code", map[string]any{"context": map[string]string{"language": "python"}, "code": "1"})
	if want := `{"code":"RUNTIME_ERROR","message":"error running codes language runtime server not configured: ` + errNoJupyter.Error() + `"}` + "\n"; r.status != 500 || r.body != want {
		t.Errorf("run: %d %s", r.status, r.body)
	}
}

// jupyterProgramsHidden makes this process's sandboxes look for Jupyter
// where there is none, as on a machine without it.
func jupyterProgramsHidden(t *testing.T) {
	old := jupyterFallback
	jupyterFallback = "/nonexistent/osb-jupyter/bin/jupyter-server"
	t.Cleanup(func() { jupyterFallback = old })
	if _, err := exec.LookPath("jupyter-server"); err == nil {
		t.Setenv("PATH", "/usr/bin:/bin")
	}
}

// TestCodeBashKernel: a second language, where its kernel is installed.
func TestCodeBashKernel(t *testing.T) {
	t.Parallel() // the two longest tests here (Python kernels starting): side by side
	needJupyter(t)
	if _, err := os.Stat("/opt/osb-jupyter/share/jupyter/kernels/bash/kernel.json"); err != nil {
		t.Skip("no bash kernel in /opt/osb-jupyter; scripts/code-interpreter-setup installs one")
	}
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		id := createContext(t, url, "bash")
		ctx := map[string]string{"id": id, "language": "bash"}
		codeRun(t, url, map[string]any{"context": ctx, "code": "N=6"}, nil)
		if got := render(codeRun(t, url, map[string]any{"context": ctx, "code": "echo $((N * 7))"}, nil)); got != "init\nstdout \"42\\n\"\nexecution_count 2\nexecution_complete\n" {
			t.Errorf("bash run:\n%s", got)
		}
		if r := call(t, "GET", url+"/code/contexts?language=bash", nil); r.status != 200 || r.body != `[{"id":"`+id+`","language":"bash"}]`+"\n" {
			t.Errorf("list: %d %s", r.status, r.body)
		}
		// A language the sandbox has no kernel for.
		r := call(t, "POST", url+"/code/context", map[string]string{"language": "java"})
		if r.status != 400 || !strings.Contains(r.body, `"message":"no Jupyter kernel for language java in this sandbox (kernels for: bash, python)"`) {
			t.Errorf("java: %d %s", r.status, r.body)
		}
		// A run's answer starts before its default context is made: a
		// failure there ends the stream with execd's bare error object.
		if got := render(codeRun(t, url, map[string]any{"context": map[string]string{"language": "java"}, "code": "1"}, nil)); got !=
			"server_error RUNTIME_ERROR: error running codes no Jupyter kernel for language java in this sandbox (kernels for: bash, python)\n" {
			t.Errorf("java run:\n%s", got)
		}
	})
}
