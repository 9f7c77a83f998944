package interop

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// sdkWant is what each step of the SDK drivers (testdata/sdk_driver.py and
// .mjs) must give back from a server that behaves like the real platform;
// "<ID>" stands for the id the create step printed. Command output is a
// list of events, one line each without its terminator, a blank line as
// "\n" (execd-observed.md §3.1); session runs report stderr as stdout.
var sdkWant = []struct{ step, want string }{
	{"connect", `{"healthy":true}`},
	{"create", `{"id":"<ID>"}`},
	{"get_info", `{"id":"<ID>","state":"Running","image":"python:3.11","metadata":{"suite":"sdk"},
		"entrypoint":["tail","-f","/dev/null"],"has_expiry":true}`},
	{"list_sandboxes", `{"ids":["<ID>"],"total":1}`},
	{"endpoint", `{"has_endpoint":true}`},
	{"run_lines", `{"stdout":["a","\n","b","c","tail"],"stderr":[],"exit_code":0,"error":null}`},
	{"run_env", `{"stdout":["hi there"],"stderr":[],"exit_code":0,"error":null}`},
	{"run_failure", `{"stdout":["out"],"stderr":["err"],"exit_code":3,"error":{"name":"CommandExecError","value":"3"}}`},
	{"run_workdir", `{"stdout":["/tmp"],"stderr":[],"exit_code":0,"error":null}`},
	{"run_timeout", `{"stdout":[],"stderr":[],"exit_code":-1,"error":{"name":"CommandExecError","value":"-1"}}`},
	// set_env appends to the file EXECD_ENVS names, which later commands read.
	{"set_env", `{"stdout":["set by the SDK's set_env"],"stderr":[],"exit_code":0,"error":null}`},
	{"background", `{"running":false,"exit_code":4,"content":"one\ntwo\n","after_cursor":""}`},
	{"interrupt", `{"running":false}`},
	{"session", `{"first":["/tmp"],"second":["/workspace","kept","err"],"elsewhere":["/root"]}`},
	{"files", `{"read":"hello world\nsecond line\n","bytes":[0,255,98,121,116,101,115,13,10],"range":"world",
		"info":{"path":"/workspace/sdk/notes.txt","type":"file","mode":640,"size":24},
		"search":["/workspace/sdk/notes.txt"],"mode_after_chmod":600,"after_move":"hello there\nsecond line\n",
		"after_delete":["/workspace/sdk/sub/moved.txt"],"dir_gone":true}`},
	{"read_os_release", `{"has_id":true}`},
	{"metrics", `{"cpus_positive":true,"memory_positive":true}`},
	{"renew", `{"extended":true}`},
	// The sidecar puts a patch's rules before the old ones it keeps.
	{"egress", `{"before":[["allow","api.example.com"]],"default":"deny","after":[["allow","pypi.org"],["allow","api.example.com"]]}`},
	{"credential_vault", `{"created_revision":1,"revision":2,"credentials":["gh","k2"],"credential":"gh",
		"binding_hosts":["api.example.com"],"bindings":["ghb"],"secret_hidden":true}`},
	{"pause_resume", `{"paused":"Paused","state":"Running","echo":["back"]}`},
	{"snapshots", `{"name":"sdk-snap","ready":"Ready","listed":[true],"kept":"kept"}`},
	{"templates", `{"image":"python:3.11","listed":[true],"echo":["from template"],"rules":[["allow","example.org"]]}`},
	{"kill", `{"gone":true}`},
}

// badStatus matches a request log line whose status is 405 or 5xx.
var badStatus = regexp.MustCompile(`^\S+ [A-Z]+ /\S* (405|5\d\d) `)

func TestPythonSDK(t *testing.T) {
	h := start(t)
	h.checkDriver(t, h.python, filepath.Join("testdata", "sdk_driver.py"), nil)
}

// The JavaScript SDK 0.1.11 has no templates API and no set_env.
func TestJavaScriptSDK(t *testing.T) {
	h := start(t)
	h.checkDriver(t, h.node, filepath.Join("testdata", "sdk_driver.mjs"), map[string]bool{"templates": true, "set_env": true})
}

// checkDriver runs an SDK driver against the harness's server and checks
// each step it reports against sdkWant, one subtest per step; absent names
// steps the driver does not have.
func (h *harness) checkDriver(t *testing.T, interpreter, script string, absent map[string]bool) {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	// The sandboxes the driver works in, made beforehand so that a failing
	// create fails only the create steps (see the driver's header).
	made := twin{
		h.sandbox(t, map[string]any{"env": map[string]string{"GREETING": "hi there"}}),
		h.sandbox(t, map[string]any{"networkPolicy": policy, "credentialProxy": map[string]bool{"enabled": true}}),
	}
	h.vars = []string{"OSB_INTEROP_SANDBOX=" + made[0], "OSB_INTEROP_EGRESS_SANDBOX=" + made[1]}
	r := h.run(t, "", "", interpreter, abs)
	if r.Code != 0 {
		t.Errorf("%s exited %d\nstderr: %s", script, r.Code, r.Stderr)
	}
	type line struct {
		Step  string          `json:"step"`
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	got := map[string]line{}
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s printed a line that is no step report (%v): %s", script, err, sc.Text())
		}
		got[l.Step] = l
	}
	var id string
	if c, ok := got["create"]; ok && c.OK {
		var v struct{ ID string }
		json.Unmarshal(c.Value, &v)
		id = v.ID
	}
	for _, w := range sdkWant {
		if absent[w.step] {
			continue
		}
		t.Run(w.step, func(t *testing.T) {
			l, ok := got[w.step]
			switch {
			case !ok:
				t.Fatalf("the driver did not report this step\nstderr: %s", r.Stderr)
			case !l.OK:
				t.Fatalf("the SDK failed:\n%s", l.Error)
			}
			value := string(l.Value)
			if id != "" {
				value = strings.ReplaceAll(value, `"`+id+`"`, `"<ID>"`)
			}
			var gotV, wantV any
			if err := json.Unmarshal([]byte(value), &gotV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(w.want), &wantV); err != nil {
				t.Fatalf("bad want: %v", err)
			}
			if !reflect.DeepEqual(gotV, wantV) {
				t.Errorf("the SDK saw\n  %s\nwant\n  %s", value, strings.Join(strings.Fields(w.want), " "))
			}
		})
	}
	// The SDK reports each create to POST /v1/metrics/events, and the real
	// server accepts it.
	if n := strings.Count(h.log.String(), "POST /v1/metrics/events 204 "); n == 0 {
		t.Errorf("no metrics event accepted; server log:\n%s", h.log.String())
	}
	// No request of the SDK met a missing method or a server fault.
	for _, l := range strings.Split(h.log.String(), "\n") {
		if badStatus.MatchString(l) {
			t.Errorf("server log: %s", l)
		}
	}
	// Every sandbox the driver made, it killed.
	var list struct{ Items []struct{ ID string } }
	h.ours.APIGet("/sandboxes", &list)
	for _, s := range list.Items {
		if s.ID != made[0] && s.ID != made[1] {
			t.Errorf("sandbox %s is left after the driver killed all it made", s.ID)
		}
	}
}
