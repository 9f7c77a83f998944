package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ManStamp is what a man page's header says of the release: its version
// and date. The committed pages carry none, so that regenerating an
// unchanged tree changes nothing; release archives get both.
type ManStamp struct {
	Version string // e.g. 1.2.0
	Date    string // YYYY-MM-DD
}

// ParseManStamp checks a release's version and date (RFC 3339, as
// goreleaser's CommitDate, or YYYY-MM-DD) and keeps the day of the date.
func ParseManStamp(version, date string) (ManStamp, error) {
	if date == "" {
		return ManStamp{Version: version}, nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, date); err == nil {
			return ManStamp{Version: version, Date: t.UTC().Format(time.DateOnly)}, nil
		}
	}
	return ManStamp{}, fmt.Errorf("date %q is neither RFC 3339 nor YYYY-MM-DD", date)
}

// manPage renders c as a section-1 man page.
func manPage(c *cobra.Command, stamp ManStamp) string {
	var b strings.Builder
	title := strings.ToUpper(strings.TrimSuffix(manName(c), ".1"))
	source := "osb"
	if stamp.Version != "" {
		source += " " + stamp.Version
	}
	fmt.Fprintf(&b, ".TH %s 1 \"%s\" \"%s\" \"osb manual\"\n", roff(title), stamp.Date, roff(source))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(strings.TrimSuffix(manName(c), ".1")), roff(c.Short))
	if !isTopic(c) {
		fmt.Fprintf(&b, ".SH SYNOPSIS\n.nf\n%s\n.fi\n", roffLine(c.UseLine()))
	}
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(manText(description(c)))
	if c.Example != "" {
		b.WriteString(".SH EXAMPLES\n")
		b.WriteString(manLiteral(dedent(strings.Split(strings.Trim(c.Example, "\n"), "\n"))))
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() && !isTopic(c) {
		b.WriteString(".SH OPTIONS\n")
		b.WriteString(manFlags(fs))
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() && !isTopic(c) {
		b.WriteString(".SH GLOBAL OPTIONS\n")
		b.WriteString(manFlags(fs))
	}
	var related []string
	if p := c.Parent(); p != nil {
		related = append(related, manRef(p))
	}
	for _, s := range children(c) {
		related = append(related, manRef(s))
	}
	if len(related) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(related, ",\n"))
	}
	return b.String()
}

func manRef(c *cobra.Command) string {
	return fmt.Sprintf("\\fB%s\\fP(1)", roff(strings.TrimSuffix(manName(c), ".1")))
}

func manText(text string) string {
	var b strings.Builder
	for _, blk := range blocks(text) {
		if blk.literal {
			b.WriteString(manLiteral(dedent(blk.lines)))
			continue
		}
		b.WriteString(".PP\n")
		for _, l := range blk.lines {
			b.WriteString(roffLine(l) + "\n")
		}
	}
	return b.String()
}

// manLiteral keeps lines as they are, indented, without filling.
func manLiteral(lines []string) string {
	var b strings.Builder
	b.WriteString(".PP\n.RS\n.nf\n")
	for _, l := range lines {
		b.WriteString(roffLine(l) + "\n")
	}
	b.WriteString(".fi\n.RE\n")
	return b.String()
}

func manFlags(fs *pflag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		name := "\\fB\\-\\-" + roff(fl.Name) + "\\fP"
		if fl.Shorthand != "" {
			name = "\\fB\\-" + roff(fl.Shorthand) + "\\fP, " + name
		}
		varname, usage := pflag.UnquoteUsage(fl)
		if varname != "" {
			name += " \\fI" + roff(varname) + "\\fP"
		}
		switch fl.DefValue {
		case "", "false", "0", "[]":
		default:
			usage += fmt.Sprintf(" (default %s)", fl.DefValue)
		}
		fmt.Fprintf(&b, ".TP\n%s\n%s\n", name, roffLine(usage))
	})
	return b.String()
}

// roff escapes text for troff: backslashes, and hyphens so that flags
// print as the ASCII minus a user can paste.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// roffLine escapes a whole input line: one starting with a control
// character would otherwise be read as a request.
func roffLine(s string) string {
	s = roff(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
