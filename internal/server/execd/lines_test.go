//go:build linux

package execd

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// cut runs input through a lineFramer in the given pieces and returns
// the lines it emitted.
func cut(rule lineRule, pieces ...string) []string {
	var got []string
	lf := lineFramer{rule: rule, emit: func(line []byte, _ bool) { got = append(got, string(line)) }}
	for _, p := range pieces {
		lf.write([]byte(p))
	}
	lf.flush()
	return got
}

func TestLineFramer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in               string
		command, session []string
	}{
		{"a\n\nb\r\nc\rd", []string{"a", "\n", "b", "c", "d"}, []string{"a", "b", "c\rd"}},
		{"hi\n", []string{"hi"}, []string{"hi"}},
		{"no newline", []string{"no newline"}, []string{"no newline"}},
		{"\n", []string{"\n"}, nil},
		{"\n\n", []string{"\n", "\n"}, nil},
		{"\r\n\r\n", []string{"\n", "\n"}, nil},
		{"x\r\ry", []string{"x", "\n", "y"}, []string{"x\r\ry"}},
		{"x\n\ry\r", []string{"x", "\n", "y"}, []string{"x", "\ry"}},
		{"10%\r50%\r100%\n", []string{"10%", "50%", "100%"}, []string{"10%\r50%\r100%"}},
		{"caf\xe9\n\xff", []string{"caf\xe9", "\xff"}, []string{"caf\xe9", "\xff"}},
		{"", nil, nil},
	}
	for _, c := range cases {
		for _, rule := range []lineRule{commandLines, sessionLines} {
			want := map[lineRule][]string{commandLines: c.command, sessionLines: c.session}[rule]
			// Whole, a byte at a time, and cut in two at every place
			// (a \r\n cut between its \r and its \n included): the
			// same lines.
			splits := [][]string{{c.in}, strings.Split(c.in, "")}
			for i := 1; i < len(c.in); i++ {
				splits = append(splits, []string{c.in[:i], c.in[i:]})
			}
			for _, pieces := range splits {
				if got := cut(rule, pieces...); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
					t.Errorf("rule %d, %q in pieces %q: %q, want %q", rule, c.in, pieces, got, want)
				}
			}
		}
	}
}

// Not parallel: it lowers the cap, a package variable, for the test.
func TestLineFramerSplitsOnlyOverTheCap(t *testing.T) {
	defer func(n int) { maxLine = n }(maxLine)
	maxLine = 8
	cases := []struct {
		in   string
		want []string
	}{
		{"12345678\n", []string{"12345678"}}, // at the cap: one line, and no empty line after it
		{"123456789\n\n", []string{"12345678", "9", "\n"}},
		{strings.Repeat("x", 20), []string{"xxxxxxxx", "xxxxxxxx", "xxxx"}},
		{"1234567\xc3\xa9\n", []string{"1234567", "\xc3\xa9"}}, // a character is never cut
	}
	for _, c := range cases {
		for _, pieces := range [][]string{{c.in}, strings.Split(c.in, "")} {
			if got := cut(commandLines, pieces...); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
				t.Errorf("%q in %d pieces: %q, want %q", c.in, len(pieces), got, c.want)
			}
		}
	}
	if got := cut(sessionLines, "123456789\r\n"); fmt.Sprintf("%q", got) != `["12345678" "9"]` {
		t.Errorf("session: %q", got)
	}
}

func TestCommandOutputLines(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		cases := []struct {
			command        string
			stdout, stderr string
		}{
			{`printf 'a\n\nb\r\nc\rd'`, lines("a", "\n", "b", "c", "d"), ""},
			{`printf 'e1\r\n\r\ne2' >&2`, "", lines("e1", "\n", "e2")},
			// A \r\n written in two parts ends one line, not two.
			{`printf 'a\r'; sleep 0.3; printf '\nb\n'`, lines("a", "b"), ""},
			{`printf '\n'`, lines("\n"), ""},
			// The last line goes when the command ends, even when a child
			// it left behind still holds its output open.
			{`sleep 5 & printf 'partial'`, lines("partial"), ""},
		}
		for _, c := range cases {
			s := summarize(events(t, url+"/command", map[string]any{"command": c.command}))
			if s.stdout != c.stdout || s.stderr != c.stderr || s.end != "execution_complete" {
				t.Errorf("%s: stdout %s, stderr %s, end %s; want stdout %s, stderr %s", c.command, s.stdout, s.stderr, s.end, c.stdout, c.stderr)
			}
		}
		// Background output is kept as bytes: the logs are not lines.
		bg := summarize(events(t, url+"/command", map[string]any{"command": `printf 'a\r\n\nb\rc'`, "background": true}))
		waitFinished(t, url, bg.id)
		if logs := call(t, "GET", url+"/command/"+bg.id+"/logs", nil); logs.body != "a\r\n\nb\rc" || logs.header.Get("EXECD-COMMANDS-TAIL-CURSOR") != "7" {
			t.Errorf("background logs %q %v", logs.body, logs.header)
		}
	})
}

func TestCommandLongAndManyLines(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t, false)
	srv := httptest.NewServer(New(sb, Options{}))
	defer srv.Close()

	// A 1 MB line is one event.
	s := summarize(events(t, srv.URL+"/command", map[string]any{"command": `head -c 1000000 /dev/zero | tr '\0' x; echo; echo next`}))
	if want := lines(strings.Repeat("x", 1000000), "next"); s.stdout != want || s.end != "execution_complete" {
		t.Errorf("1 MB line: %d bytes of events, end %s", len(s.stdout), s.end)
	}

	// 200 000 lines are 200 000 events, in order, none lost.
	evs := events(t, srv.URL+"/command", map[string]any{"command": "seq 1 200000"})
	n := 0
	for _, ev := range evs {
		if ev.Type != client.EventStdout {
			continue
		}
		n++
		if string(ev.Data) != strconv.Itoa(n) {
			t.Fatalf("event %d is %q", n, ev.Data)
		}
	}
	if n != 200000 {
		t.Errorf("%d events, want 200000", n)
	}
}

// TestCommandLineOverTheCap: over the cap, a line comes in pieces of the
// cap. Not parallel: it lowers the cap, a package variable, for the test.
func TestCommandLineOverTheCap(t *testing.T) {
	sb := startSandbox(t, false)
	srv := httptest.NewServer(New(sb, Options{}))
	defer srv.Close()
	defer func(n int) { maxLine = n }(maxLine)
	maxLine = 1 << 16
	s := summarize(events(t, srv.URL+"/command", map[string]any{"command": `head -c 150000 /dev/zero | tr '\0' y; echo`}))
	if want := lines(strings.Repeat("y", 1<<16), strings.Repeat("y", 1<<16), strings.Repeat("y", 150000-2<<16)); s.stdout != want {
		t.Errorf("a line over the cap: %.200s", s.stdout)
	}
}

func TestSessionOutputLines(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		sid := createSession(t, url, nil)
		cases := []struct{ command, stdout string }{
			// Lines end at \n only; a \r before it is dropped, empty
			// lines are not sent, stderr is stdout.
			{`printf 'a\n\nb\r\nc\rd'`, lines("a", "b", "c\rd")},
			{`echo out; echo err >&2; printf 'last'`, lines("out", "err", "last")},
			{`printf '\n\n'`, ""},
		}
		for _, c := range cases {
			if s := sessionRun(t, url, sid, map[string]any{"command": c.command}); s.stdout != c.stdout || s.end != "execution_complete" {
				t.Errorf("%s: %+v, want stdout %s", c.command, s, c.stdout)
			}
		}
		s := sessionRun(t, url, sid, map[string]any{"command": `head -c 1000000 /dev/zero | tr '\0' x; echo`})
		if s.stdout != lines(strings.Repeat("x", 1000000)) {
			t.Errorf("1 MB line in a session: %d bytes of events", len(s.stdout))
		}
	})
}

// A client may interrupt a command as soon as init has named it.
func TestInterruptRightAfterInit(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		for i := range 40 {
			resp := open(t, "POST", url+"/command", map[string]any{"command": "sleep 30"})
			r := client.NewEventReader(resp.Body)
			init, err := r.Next()
			if err != nil || init.Type != client.EventInit {
				t.Fatalf("run %d: first event %+v, %v", i, init, err)
			}
			d := call(t, "DELETE", url+"/command?id="+init.Text, nil)
			s := rest(t, r)
			resp.Body.Close()
			if d.status != 200 || s.end != `error/CommandExecError/-1/["signal: terminated"]` {
				t.Fatalf("run %d: interrupt answered %d %s; stream ended %s", i, d.status, d.body, s.end)
			}
		}
	})
}
