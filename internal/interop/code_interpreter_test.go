package interop

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// codeWant is what each step of testdata/code_interpreter_driver.py must
// give back. Output comes as the kernel wrote it, newline included; a value
// as its text/plain form; an exception is the run's end, with no
// execution_complete.
var codeWant = []struct{ step, want string }{
	{"create_context", `{"language":"python","has_id":true}`},
	{"get_context", `{"same_id":true,"language":"python"}`},
	{"state_kept", `{"first":{"stdout":["set x\n"],"stderr":[],"results":[],"count":1,"error":null,"complete":true},
		"second":{"stdout":[],"stderr":[],"results":["42"],"count":2,"error":null,"complete":true}}`},
	{"error", `{"stdout":["before\n"],"stderr":[],"results":[],"count":3,"error":{"name":"ZeroDivisionError","value":"division by zero"},"complete":false}`},
	{"interrupt", `{"interrupted":{"stdout":["looping\n"],"stderr":[],"results":[],"count":4,"error":{"name":"KeyboardInterrupt","value":""},"complete":false},
		"id_is_context":true,"after":{"stdout":[],"stderr":[],"results":["40"],"count":5,"error":null,"complete":true}}`},
	{"default_context", `{"stdout":[],"stderr":[],"results":["'no context given'"],"count":1,"error":null,"complete":true}`},
	{"unknown_context", `{"raised":"SandboxApiException","status":404}`},
	{"list_and_delete", `{"listed_both":true,"deleted_one":true,"after_all":0}`},
}

// TestCodeInterpreterSDK drives the official code-interpreter SDK against
// osb server, whose sandboxes run the Jupyter that
// scripts/code-interpreter-setup installed.
func TestCodeInterpreterSDK(t *testing.T) {
	h := start(t)
	python := filepath.Join(os.Getenv(dirEnv), "code-venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("the code-interpreter SDK is not installed (%v); run scripts/code-interpreter-setup", err)
	}
	if _, err := os.Stat("/opt/osb-jupyter/bin/jupyter-server"); err != nil {
		t.Fatalf("no Jupyter for sandboxes (%v); run scripts/code-interpreter-setup", err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "code_interpreter_driver.py"))
	if err != nil {
		t.Fatal(err)
	}
	h.vars = []string{"OSB_INTEROP_SANDBOX=" + h.sandbox(t, nil)}
	r := h.run(t, "", "", python, script)
	if r.Code != 0 {
		t.Errorf("the driver exited %d\nstderr: %s", r.Code, r.Stderr)
	}
	type report struct {
		Step  string          `json:"step"`
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	got := map[string]report{}
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l report
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("the driver printed a line that is no step report (%v): %s", err, sc.Text())
		}
		got[l.Step] = l
	}
	for _, w := range codeWant {
		t.Run(w.step, func(t *testing.T) {
			l, ok := got[w.step]
			switch {
			case !ok:
				t.Fatalf("the driver did not report this step\nstderr: %s", r.Stderr)
			case !l.OK:
				t.Fatalf("the SDK failed:\n%s", l.Error)
			}
			var gotV, wantV any
			json.Unmarshal(l.Value, &gotV)
			if err := json.Unmarshal([]byte(w.want), &wantV); err != nil {
				t.Fatalf("bad want: %v", err)
			}
			if !reflect.DeepEqual(gotV, wantV) {
				t.Errorf("the SDK saw\n  %s\nwant\n  %s", l.Value, strings.Join(strings.Fields(w.want), " "))
			}
		})
	}
	for _, l := range strings.Split(h.log.String(), "\n") {
		if badStatus.MatchString(l) {
			t.Errorf("server log: %s", l)
		}
	}
}
