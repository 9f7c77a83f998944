package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
)

// NewTree builds the command tree over a factory that sees no environment,
// so defaults shown in the pages do not depend on who generates them.
func NewTree() *cobra.Command {
	ios, _, _, _ := iostreams.Test()
	root := commands.NewCmdRoot(cmdutil.New(ios, func(string) string { return "" }))
	root.DisableAutoGenTag = true
	return root
}

// Generate renders every documented command: "cli" → Markdown files and
// "man" → man pages (headed by stamp), each keyed by file name. docsDir
// holds the guides; the index lists the deliberate differences migrating.md
// describes.
func Generate(root *cobra.Command, docsDir string, stamp ManStamp) (map[string]map[string][]byte, error) {
	differences, err := migratingDifferences(filepath.Join(docsDir, "migrating.md"))
	if err != nil {
		return nil, err
	}
	pages := map[string]map[string][]byte{"cli": {}, "man": {}}
	var cmds []*cobra.Command
	walk(root, func(c *cobra.Command) { cmds = append(cmds, c) })
	for _, c := range cmds {
		pages["cli"][markdownName(c)] = []byte(markdownPage(c))
		pages["man"][manName(c)] = []byte(manPage(c, stamp))
	}
	pages["cli"]["README.md"] = []byte(markdownIndex(cmds, differences))
	return pages, nil
}

// differenceHeading is a "### N. Title" heading of migrating.md.
var differenceHeading = regexp.MustCompile(`(?m)^### (\d+)\. (.+)$`)

// migratingDifferences reads the titles of the deliberate differences from
// the migration guide, so that they are written in one place only.
func migratingDifferences(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the deliberate differences: %w", err)
	}
	var out []string
	for _, m := range differenceHeading.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[2])
	}
	return out, nil
}

// walk visits c and every documented command below it, in name order.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	if !documented(c) {
		return
	}
	// Cobra adds -h/--help lazily, at run time; add it so pages list it.
	c.InitDefaultHelpFlag()
	fn(c)
	for _, sub := range children(c) {
		walk(sub, fn)
	}
}

func documented(c *cobra.Command) bool {
	return !c.Hidden && c.Deprecated == "" && c.Name() != "help"
}

func children(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if documented(sub) {
			out = append(out, sub)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// isTopic reports whether c is a help topic (text only, nothing to run).
func isTopic(c *cobra.Command) bool {
	return !c.Runnable() && !c.HasSubCommands()
}

// displayPath is how a user reaches c: help topics through `osb help`.
func displayPath(c *cobra.Command) string {
	if isTopic(c) && c.HasParent() {
		return c.Root().Name() + " help " + c.Name()
	}
	return c.CommandPath()
}

func markdownName(c *cobra.Command) string {
	return strings.ReplaceAll(displayPath(c), " ", "_") + ".md"
}

func manName(c *cobra.Command) string {
	return strings.ReplaceAll(displayPath(c), " ", "-") + ".1"
}

// description is the long help, or the short one when there is none.
func description(c *cobra.Command) string {
	if c.Long != "" {
		return c.Long
	}
	return c.Short
}

// flagUsages is the flag table as --help prints it, without trailing space.
func flagUsages(fs *pflag.FlagSet) string {
	var lines []string
	for _, l := range strings.Split(fs.FlagUsagesWrapped(0), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// textBlock is a run of prose lines or of indented (literal) lines.
type textBlock struct {
	literal bool
	lines   []string
}

// blocks splits help text into prose paragraphs and indented literal blocks
// (examples, tables), which both renderers keep verbatim.
func blocks(text string) []textBlock {
	var out []textBlock
	var cur *textBlock
	flush := func() {
		if cur != nil && len(cur.lines) > 0 {
			out = append(out, *cur)
		}
		cur = nil
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			flush()
			continue
		}
		literal := line[0] == ' ' || line[0] == '\t'
		if cur != nil && cur.literal != literal {
			flush()
		}
		if cur == nil {
			cur = &textBlock{literal: literal}
		}
		cur.lines = append(cur.lines, line)
	}
	flush()
	return out
}

// dedent removes the indentation common to all lines.
func dedent(lines []string) []string {
	n := -1
	for _, l := range lines {
		ind := len(l) - len(strings.TrimLeft(l, " \t"))
		if n < 0 || ind < n {
			n = ind
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[n:]
	}
	return out
}
