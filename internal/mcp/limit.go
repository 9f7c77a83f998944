package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The output budget: how much output or file content one tool call
// returns, counted as the JSON text of the result the agent reads (escapes,
// base64, and each log message's own fields included). The default is
// sized for an agent's context window; docs/mcp.md says why.
const (
	DefaultMaxOutput = 32 << 10
	// MaxOutputCeiling bounds what a call may ask for with max_output.
	MaxOutputCeiling = 16 << 20
)

// budget is the output budget of one call and where it came from, for the
// note that says what it cut.
type budget struct {
	bytes   int
	perCall bool // max_output of the call, not the server's --max-output
}

func (b budget) String() string {
	if b.perCall {
		return fmt.Sprintf("the %d-byte output budget this call asked for (max_output)", b.bytes)
	}
	return fmt.Sprintf("the %d-byte output budget of this server (osb mcp --max-output)", b.bytes)
}

// serverBudget is the budget of the official tools' calls: --max-output.
func (s *Server) serverBudget() budget { return budget{bytes: s.opts.MaxOutput} }

// callBudget is the budget a call asks for with max_output, or the server's.
func (s *Server) callBudget(perCall *int) (budget, error) {
	if perCall == nil {
		return s.serverBudget(), nil
	}
	if *perCall < 1 || *perCall > MaxOutputCeiling {
		return budget{}, usage("max_output must be between 1 and %d bytes, got %d", MaxOutputCeiling, *perCall)
	}
	return budget{bytes: *perCall, perCall: true}, nil
}

// perCallBudget is the per-call budget of osb's own tools (the official
// tools' arguments are the official server's, so theirs is the server's).
type perCallBudget struct {
	MaxOutput *int `json:"max_output,omitempty" jsonschema:"Most bytes of output this call returns, counted as JSON text; none: the server's --max-output."`
}

// truncation notes, in a result, that content was left out to keep the
// call within its output budget, which limit that was, and how to read on.
type truncation struct {
	OmittedBytes int64  `json:"omitted_bytes"`
	Limit        int    `json:"limit"` // the output budget that cut, in bytes
	Note         string `json:"note"`
}

// jsonSize is how many bytes s takes as a JSON string's content, escaped
// as encoding/json writes it (the SDK writes the result's text with it).
func jsonSize(s string) int {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		n += runeJSONSize(r, size)
		s = s[size:]
	}
	return n
}

func runeJSONSize(r rune, size int) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6 // \u00XX
	case r == utf8.RuneError && size == 1:
		return 6 // an invalid byte is written as \ufffd
	}
	return size
}

// fitFront is the length of the longest start of s, ending between two
// characters, whose JSON text takes at most room bytes.
func fitFront(s string, room int) int {
	used, i := 0, 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if used+runeJSONSize(r, size) > room {
			break
		}
		used += runeJSONSize(r, size)
		i += size
	}
	return i
}

// fitBack is where the shortest end of s starts, at a character, whose
// JSON text takes at most room bytes.
func fitBack(s string, room int) int {
	used, i := 0, len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if used+runeJSONSize(r, size) > room {
			break
		}
		used += runeJSONSize(r, size)
		i -= size
	}
	return i
}

// messageFraming is what one log message costs besides its text: its
// other fields, quotes and the comma after it.
var messageFraming = func() int {
	b, _ := json.Marshal(outputMessage{Timestamp: 1795967002972, IsError: false})
	return len(b) + 1
}()

// outputLine is one output event of a command: one message of its logs.
type outputLine struct {
	text      string
	stderr    bool
	timestamp int64
	cost      int // of its message in the result
}

// streamCut is what a budget left out of one stream: whole lines from
// the start, and maybe the start of the first line kept.
type streamCut struct {
	lines   int64
	bytes   int64
	partial bool
}

// outputTail keeps the newest messages of a command's output within a
// budget shared by stdout and stderr, each message counted with its
// fields: the end of a long output (the summary, the error) is what an
// agent needs. A message is the text of one output event, as the official
// server keeps it: one line without its terminator, an empty line "\n".
type outputTail struct {
	budget budget
	lines  []outputLine
	size   int
	cut    [2]streamCut // stdout, stderr
}

func newOutputTail(b budget) *outputTail { return &outputTail{budget: b} }

func streamIndex(stderr bool) int {
	if stderr {
		return 1
	}
	return 0
}

func (t *outputTail) add(text string, timestamp int64, stderr bool) {
	l := outputLine{text: text, stderr: stderr, timestamp: timestamp, cost: jsonSize(text) + messageFraming}
	t.lines = append(t.lines, l)
	t.size += l.cost
	for t.size > t.budget.bytes && len(t.lines) > 0 {
		first := &t.lines[0]
		cut := &t.cut[streamIndex(first.stderr)]
		over := t.size - t.budget.bytes
		if over >= first.cost-messageFraming {
			// The whole line goes, with the start cut from it before, if any.
			cut.lines++
			cut.bytes += int64(len(first.text))
			cut.partial = false
			t.size -= first.cost
			t.lines = t.lines[1:]
			continue
		}
		i := fitBack(first.text, first.cost-messageFraming-over)
		cut.bytes += int64(i)
		cut.partial = true
		first.text = first.text[i:]
		t.size -= first.cost
		first.cost = jsonSize(first.text) + messageFraming
		t.size += first.cost
	}
}

// logs is the kept output: a message per output event, in the order each
// stream sent them, stamped with the event's time. Never nil.
func (t *outputTail) logs() executionLogs {
	logs := executionLogs{Stdout: []outputMessage{}, Stderr: []outputMessage{}}
	for _, l := range t.lines {
		m := outputMessage{Text: l.text, Timestamp: l.timestamp, IsError: l.stderr}
		if l.stderr {
			logs.Stderr = append(logs.Stderr, m)
		} else {
			logs.Stdout = append(logs.Stdout, m)
		}
	}
	return logs
}

// truncation says what the budget cut from each stream; readOn says how
// to get all of it.
func (t *outputTail) truncation(readOn string) *truncation {
	var parts []string
	var omitted int64
	for i, name := range []string{"stdout", "stderr"} {
		c := t.cut[i]
		if c.bytes == 0 && c.lines == 0 {
			continue
		}
		omitted += c.bytes
		parts = append(parts, c.describe(name))
	}
	if len(parts) == 0 {
		return nil
	}
	return &truncation{OmittedBytes: omitted, Limit: t.budget.bytes, Note: fmt.Sprintf(
		"the output was longer than %s, so the oldest output was left out (%s); the newest is kept. %s",
		t.budget, strings.Join(parts, "; "), readOn)}
}

func (c streamCut) describe(stream string) string {
	var what string
	switch {
	case c.lines == 0:
		what = "the start of its first line"
	case c.partial:
		what = fmt.Sprintf("its first %d lines and the start of the next", c.lines)
	default:
		what = fmt.Sprintf("its first %d lines", c.lines)
	}
	return fmt.Sprintf("%s: %s, %d bytes", stream, what, c.bytes)
}

// cutText shortens s to at most max bytes without splitting a character.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// runeStart is the first index at or after i where a UTF-8 character starts.
func runeStart(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
