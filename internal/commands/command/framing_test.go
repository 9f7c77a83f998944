package command_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// execdFrames stands in for a lifecycle server and a real execd, replaying
// the frames execd sends (../shared/reference/execd-observed.md §3.1): one
// stdout or stderr event per line, its terminator (\n, \r or \r\n)
// stripped, an empty line as the text "\n", a last line without a newline
// flushed at the end. script maps a command's shell text to its events.
func execdFrames(t *testing.T, script map[string][]string) *cmdtest.Env {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"endpoint": r.Host + "/execd", "headers": map[string]string{}})
	})
	serve := func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Command string }
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, `{"type":"init","text":"6247baac7e0e4db8ace115b4b610f78c","timestamp":1795967002970}`+"\n\n")
		fmt.Fprintf(w, `{"type":"ping","text":"pong","timestamp":1795967002971}`+"\n\n")
		for _, ev := range script[req.Command] {
			typ, text, _ := strings.Cut(ev, " ")
			b, _ := json.Marshal(text)
			fmt.Fprintf(w, `{"type":%q,"text":%s,"timestamp":1795967002971}`+"\n\n", typ, b)
		}
		io.WriteString(w, `{"type":"execution_complete","execution_time":1,"timestamp":1795967002972}`+"\n\n")
	}
	mux.HandleFunc("POST /execd/command", serve)
	mux.HandleFunc("POST /execd/session/{id}/run", serve)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = srv.Listener.Addr().String()
	return env
}

// Output looks as it does in a local shell: each event one line, an empty
// line kept, CRLF and CR line ends as plain lines, stdout and stderr each on
// their own. Whether the last line ended with a newline is not sent, so it
// always gets one, as the official SDKs join lines.
func TestOutputIsLinePerEvent(t *testing.T) {
	t.Parallel()
	env := execdFrames(t, map[string][]string{
		"ls":                                  {"stdout bin", "stdout etc", "stdout workspace"},
		"sh -c 'echo a; echo b'":              {"stdout a", "stdout b"},
		`printf 'a\n\nb'`:                     {"stdout a", "stdout \n", "stdout b"},
		`printf 'x\r\ny\r\n'`:                 {"stdout x", "stdout y"},
		`printf '10%\r20%\r'`:                 {"stdout 10%", "stdout 20%"},
		`sh -c 'echo hi; echo err >&2; echo'`: {"stdout hi", "stdout \n", "stderr err"},
		"true":                                nil,
	})
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
	}{
		{[]string{"ls"}, "bin\netc\nworkspace\n", ""},
		{[]string{"sh", "-c", "echo a; echo b"}, "a\nb\n", ""},
		{[]string{"printf", `a\n\nb`}, "a\n\nb\n", ""},
		{[]string{"printf", `x\r\ny\r\n`}, "x\ny\n", ""},
		{[]string{"printf", `10%\r20%\r`}, "10%\n20%\n", ""},
		{[]string{"sh", "-c", "echo hi; echo err >&2; echo"}, "hi\n\n", "err\n"},
		{[]string{"true"}, "", ""},
	} {
		r := env.Run(append([]string{"command", "run", "sb-1", "--"}, tc.args...)...)
		expect(t, r, 0, tc.stdout, tc.stderr)
		// A session run prints its events the same way.
		r = env.Run(append([]string{"command", "session", "run", "sb-1", "s-1", "--"}, tc.args...)...)
		expect(t, r, 0, tc.stdout, tc.stderr)
		// -o json holds the same text.
		r = env.Run(append([]string{"command", "run", "sb-1", "-o", "json", "--"}, tc.args...)...)
		var res struct{ Stdout, Stderr string }
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || res.Stdout != tc.stdout || res.Stderr != tc.stderr {
			t.Errorf("%v -o json: exit %d, %v\n%s", tc.args, r.Code, err, r.Stdout)
		}
	}
}
