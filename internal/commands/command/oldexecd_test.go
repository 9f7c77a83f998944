package command_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// oldExecd stands in for a lifecycle server and an execd from before argv
// support (v1.1.0): it ignores "argv", so a request with argv alone has no
// command and gets its 400. It records the bodies of POST /command.
type oldExecd struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newOldExecd(t *testing.T) *oldExecd {
	o := &oldExecd{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"endpoint": r.Host + "/execd", "headers": map[string]string{}})
	})
	mux.HandleFunc("POST /execd/command", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.bodies = append(o.bodies, string(body))
		o.mu.Unlock()
		var req struct {
			Command    string `json:"command"`
			Cwd        string `json:"cwd"`
			Background bool   `json:"background"`
		}
		json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch {
		case req.Cwd != "":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"code":"INVALID_REQUEST_BODY","message":"invalid request, validation error working directory does not exist: `+req.Cwd+`"}`)
			return
		case req.Command == "":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"code":"INVALID_REQUEST_BODY","message":"invalid request, validation error Key: 'RunCommandRequest.Command' Error:Field validation for 'Command' failed on the 'required' tag"}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `{"type":"init","text":"0123456789abcdef0123456789abcdef","timestamp":1}`+"\n\n")
		if req.Command == "bare-error" {
			// An error event with nothing in it.
			io.WriteString(w, `{"type":"error","timestamp":2}`+"\n\n")
			return
		}
		if !req.Background {
			// The command it was given, as its output: one line, sent
			// without its newline as execd sends lines.
			line, _ := json.Marshal(req.Command)
			io.WriteString(w, `{"type":"stdout","text":`+string(line)+`,"timestamp":2}`+"\n\n")
		}
		io.WriteString(w, `{"type":"execution_complete","execution_time":1,"timestamp":3}`+"\n\n")
	})
	o.Server = httptest.NewServer(mux)
	t.Cleanup(o.Close)
	return o
}

func (o *oldExecd) env(t *testing.T) *cmdtest.Env {
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = o.URL
	return env
}

// sent returns the bodies received since the last call.
func (o *oldExecd) sent() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.bodies
	o.bodies = nil
	return b
}

// An execd that rejects argv gets the same arguments as quoted shell text.
func TestArgvFallsBackToShellText(t *testing.T) {
	t.Parallel()
	o := newOldExecd(t)
	env := o.env(t)
	text := `printf '%s|' 'a b' '$HOME' ''`
	expect(t, env.Run("command", "run", "sb-1", "--argv", "--", "printf", "%s|", "a b", "$HOME", ""), 0, text+"\n", "")
	want := []string{`{"argv":["printf","%s|","a b","$HOME",""]}`, `{"command":` + jsonString(text) + `}`}
	if got := o.sent(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	r := env.Run("command", "run", "sb-1", "-d", "-o", "json", "--argv", "--", "sleep", "10")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"execution_id": "0123456789abcdef0123456789abcdef"`) {
		t.Errorf("background: %+v", r)
	}
	if got := o.sent(); len(got) != 2 || got[1] != `{"command":"sleep 10","background":true}` {
		t.Errorf("background requests: %q", got)
	}

	// Any other 400 is the answer: nothing is sent again.
	r = env.Run("command", "run", "sb-1", "-w", "/nope", "--argv", "--", "true")
	if r.Code != 125 || !strings.HasPrefix(r.Stderr, "Error: invalid request, validation error working directory does not exist: /nope (HTTP 400") {
		t.Errorf("other 400: %+v", r)
	}
	if got := o.sent(); len(got) != 1 {
		t.Errorf("other 400 sent %d requests: %q", len(got), got)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// An error event that says nothing is still the end, reported as such.
func TestErrorEventWithoutDetails(t *testing.T) {
	t.Parallel()
	env := newOldExecd(t).env(t)
	expect(t, env.Run("command", "run", "sb-1", "--", "bare-error"), 125, "",
		"Error: the server reported an error without details\n")
	expect(t, env.Run("command", "run", "sb-1", "-d", "--", "bare-error"), 1, "",
		"Error: the command could not start: the server reported an error without details\n")
}
