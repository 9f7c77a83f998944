package output

import (
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/iostreams"
)

type rec struct {
	ID        string            `json:"id"`
	State     string            `json:"status"`
	Note      *string           `json:"note"`
	Labels    map[string]string `json:"labels"`
	CreatedAt time.Time         `json:"created_at"`
}

var sample = []rec{
	{ID: "abc", State: "Running", Labels: map[string]string{"team": "a"}, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
	{ID: "defghi", State: "Paused", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 500000000, time.UTC)},
}

func run(t *testing.T, format string, tty bool, fn func(p *Printer) error) (string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetTTY(false, tty, tty)
	if err := fn(New(ios, format)); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

func TestMessagesPerFormat(t *testing.T) {
	cases := map[string]string{
		Table: "OK: done\n",
		JSONF: "{\n  \"status\": \"ok\",\n  \"message\": \"done\"\n}\n",
		YAMLF: "message: done\nstatus: ok\n",
	}
	for format, want := range cases {
		out, _ := run(t, format, false, func(p *Printer) error { return p.Success("done") })
		if out != want {
			t.Errorf("%s: %q, want %q", format, out, want)
		}
	}
	out, _ := run(t, Table, true, func(p *Printer) error { return p.Success("done") })
	if out != "  ✅ done\n" {
		t.Errorf("tty success %q", out)
	}
}

func TestWarningGoesToStderr(t *testing.T) {
	for format, want := range map[string]string{
		Table: "WARN: careful\n",
		JSONF: "{\n  \"status\": \"warning\",\n  \"message\": \"careful\"\n}\n",
	} {
		out, errOut := run(t, format, false, func(p *Printer) error { p.Warning("careful"); return nil })
		if out != "" || errOut != want {
			t.Errorf("%s: stdout %q stderr %q", format, out, errOut)
		}
	}
}

func TestListPlainTable(t *testing.T) {
	out, _ := run(t, Table, false, func(p *Printer) error {
		return p.List("Things", sample, "id", "status", "note", "missing", "labels", "created_at")
	})
	want := "ID      STATUS   NOTE  MISSING  LABELS        CREATED_AT\n" +
		"abc     Running  -     -        {\"team\":\"a\"}  2026-01-02T03:04:05Z\n" +
		"defghi  Paused   -     -        -             2026-01-02T03:04:05.5Z\n"
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestListOnTerminalHasTitleBordersAndIcons(t *testing.T) {
	out, _ := run(t, Table, true, func(p *Printer) error {
		return p.List("Things", sample, "id", "status")
	})
	want := "Things\n" +
		"╭────────┬───────────╮\n" +
		"│ ID     │ STATUS    │\n" +
		"├────────┼───────────┤\n" +
		"│ abc    │ ● Running │\n" +
		"│ defghi │ ⏸ Paused  │\n" +
		"╰────────┴───────────╯\n"
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestObjectKeyValueKeepsFieldOrder(t *testing.T) {
	out, _ := run(t, Table, false, func(p *Printer) error { return p.Object("Thing", sample[0]) })
	want := "id          abc\nstatus      Running\nnote        -\nlabels      {\"team\":\"a\"}\ncreated_at  2026-01-02T03:04:05Z\n"
	if out != want {
		t.Fatalf("got:\n%s", out)
	}
}

func TestYAMLSortsKeysAndQuotesAmbiguousStrings(t *testing.T) {
	out, _ := run(t, YAMLF, false, func(p *Printer) error {
		return p.Data(Obj{{"zeta", "true"}, {"items", sample[:1]}, {"count", 3}, {"empty", []string{}}, {"timeout", "0:30:00"}, {"exp", "1e3"}, {"inf", ".inf"}, {"word", "0:30:00 later"}})
	})
	want := "count: 3\nempty: []\nexp: '1e3'\ninf: '.inf'\nitems:\n- created_at: '2026-01-02T03:04:05Z'\n  id: abc\n  labels:\n    team: a\n  note: null\n  status: Running\ntimeout: '0:30:00'\nword: 0:30:00 later\nzeta: 'true'\n"
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestJSONKeepsInsertionOrderAndUnicode(t *testing.T) {
	out, _ := run(t, JSONF, false, func(p *Printer) error {
		return p.Panel("ignored", Obj{{"b", "héllo <x>"}, {"a", nil}})
	})
	if out != "{\n  \"b\": \"héllo <x>\",\n  \"a\": null\n}\n" {
		t.Fatalf("got %q", out)
	}
}

func TestPanelPlainAndStyled(t *testing.T) {
	o := Obj{{"id", "abc"}, {"timeout", "0:30:00"}}
	plain, _ := run(t, Table, false, func(p *Printer) error { return p.Panel("Sandbox Created", o) })
	if plain != "--- Sandbox Created ---\n  id: abc\n  timeout: 0:30:00\n" {
		t.Fatalf("plain %q", plain)
	}
	styled, _ := run(t, Table, true, func(p *Printer) error { return p.Panel("Sandbox Created", o) })
	if styled != "\n  ✓ Sandbox Created\n  "+"─────────────────"+"\n  id: abc\n  timeout: 0:30:00\n\n" {
		t.Fatalf("styled %q", styled)
	}
}

// On a colour terminal: title, headers, ids and statuses are coloured and
// borders dim; the columns still line up, escapes taking no width.
func TestListInColour(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	ios.SetTTY(false, true, true)
	ios.SetANSI(true)
	if err := New(ios, Table).List("Things", sample, "id", "status"); err != nil {
		t.Fatal(err)
	}
	dim := func(s string) string { return "\x1b[2m" + s + "\x1b[0m" }
	want := "\x1b[1;36mThings\x1b[0m\n" +
		dim("╭────────┬───────────╮") + "\n" +
		dim("│") + " \x1b[1;35mID\x1b[0m     " + dim("│") + " \x1b[1;35mSTATUS\x1b[0m    " + dim("│") + "\n" +
		dim("├────────┼───────────┤") + "\n" +
		dim("│") + " \x1b[1;36mabc\x1b[0m    " + dim("│") + " \x1b[32m● Running\x1b[0m " + dim("│") + "\n" +
		dim("│") + " \x1b[1;36mdefghi\x1b[0m " + dim("│") + " \x1b[33m⏸ Paused\x1b[0m  " + dim("│") + "\n" +
		dim("╰────────┴───────────╯") + "\n"
	if out.String() != want {
		t.Fatalf("got:\n%q\nwant:\n%q", out.String(), want)
	}
	ios.DisableColor()
	out.Reset()
	New(ios, Table).List("Things", sample, "id", "status")
	if strings.ContainsAny(out.String(), "\x1b╭●") {
		t.Errorf("colour off still styles: %q", out.String())
	}
}

// Text from a server cannot drive the terminal: control characters are
// shown as escapes, in cells, panels, messages, warnings and errors, and
// warnings and errors stay on one line.
func TestServerTextIsMadePrintable(t *testing.T) {
	hostile := "bad\x1b[2Jnews\a\r\nnext line"
	ios, _, out, errOut := iostreams.Test()
	p := New(ios, Table)
	p.Object("T", Obj{{"message", hostile}})
	p.Panel("P", Obj{{"message", hostile}})
	p.Success(hostile)
	p.Warning(hostile)
	p.Problem(hostile)
	WriteError(ios, hostile)
	if strings.ContainsAny(out.String()+errOut.String(), "\x1b\a\r") {
		t.Errorf("control characters got through:\nstdout %q\nstderr %q", out.String(), errOut.String())
	}
	wantErr := "WARN: bad\\x1b[2Jnews\\x07 next line\nERROR: bad\\x1b[2Jnews\\x07 next line\nError: bad\\x1b[2Jnews\\x07 next line\n"
	if errOut.String() != wantErr {
		t.Errorf("stderr %q, want %q", errOut.String(), wantErr)
	}
}
