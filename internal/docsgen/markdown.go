package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

func markdownPage(c *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", displayPath(c))
	if isTopic(c) {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(c.Short))
	} else {
		fmt.Fprintf(&b, "%s\n\n```\n%s\n```\n\n", mdEscape(c.Short), c.UseLine())
	}
	if c.Long != "" {
		b.WriteString(mdText(c.Long))
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Aliases: `%s`\n\n", strings.Join(c.Aliases, "`, `"))
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", strings.Join(dedent(strings.Split(strings.Trim(c.Example, "\n"), "\n")), "\n"))
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() && !isTopic(c) {
		fmt.Fprintf(&b, "## Options\n\n```\n%s\n```\n\n", flagUsages(fs))
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() && !isTopic(c) {
		fmt.Fprintf(&b, "## Global options\n\n```\n%s\n```\n\n", flagUsages(fs))
	}
	if subs := children(c); len(subs) > 0 {
		b.WriteString("## Commands\n\n")
		for _, s := range subs {
			fmt.Fprintf(&b, "* [%s](%s) — %s\n", displayPath(s), markdownName(s), mdEscape(s.Short))
		}
		b.WriteString("\n")
	}
	if p := c.Parent(); p != nil {
		fmt.Fprintf(&b, "## See also\n\n* [%s](%s) — %s\n", displayPath(p), markdownName(p), mdEscape(p.Short))
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// markdownIndex is docs/cli/README.md: every command on one page, and the
// deliberate differences from the official client.
func markdownIndex(cmds []*cobra.Command, differences []string) string {
	var b strings.Builder
	b.WriteString("# osb command reference\n\n")
	b.WriteString("Generated from the command tree by `go run ./internal/docsgen`; do not edit.\n")
	b.WriteString("Guides: [getting started](../getting-started.md), [scripting](../scripting.md),\n")
	b.WriteString("[configuration](../configuration.md), and [migrating from the Python client](../migrating.md).\n\n")
	if len(differences) > 0 {
		b.WriteString("## Deliberate differences from the Python client\n\n")
		b.WriteString("Everything else matches the official client; each point is explained in\n")
		b.WriteString("[migrating](../migrating.md#deliberate-differences).\n\n")
		for i, d := range differences {
			fmt.Fprintf(&b, "%d. %s\n", i+1, d)
		}
		b.WriteString("\n")
	}
	var topics []*cobra.Command
	b.WriteString("## Commands\n\n")
	for _, c := range cmds {
		if isTopic(c) {
			topics = append(topics, c)
			continue
		}
		fmt.Fprintf(&b, "* [%s](%s) — %s\n", displayPath(c), markdownName(c), mdEscape(c.Short))
	}
	if len(topics) > 0 {
		b.WriteString("\n## Help topics\n\n")
		for _, c := range topics {
			fmt.Fprintf(&b, "* [%s](%s) — %s\n", displayPath(c), markdownName(c), mdEscape(c.Short))
		}
	}
	return b.String()
}

// mdText renders help text: prose as paragraphs, indented blocks as code.
func mdText(text string) string {
	var b strings.Builder
	for _, blk := range blocks(text) {
		if blk.literal {
			fmt.Fprintf(&b, "```\n%s\n```\n\n", strings.Join(dedent(blk.lines), "\n"))
			continue
		}
		for i, l := range blk.lines {
			blk.lines[i] = mdEscape(l)
		}
		fmt.Fprintf(&b, "%s\n\n", strings.Join(blk.lines, "\n"))
	}
	return b.String()
}

// Characters Markdown would read as markup in prose: HTML and emphasis
// openers, and list or quote markers at the start of a line.
var (
	mdInline    = regexp.MustCompile(`[<>*]|(^|[^A-Za-z0-9])_`)
	mdLineStart = regexp.MustCompile(`^([-+#]|\d+\.)( |$)`)
)

// mdEscape escapes prose outside `code spans`, which Markdown shows as is.
func mdEscape(s string) string {
	parts := strings.Split(s, "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = mdInline.ReplaceAllStringFunc(parts[i], func(m string) string {
			return m[:len(m)-1] + `\` + m[len(m)-1:]
		})
	}
	return mdLineStart.ReplaceAllStringFunc(strings.Join(parts, "`"), func(m string) string {
		if i := strings.IndexByte(m, '.'); i > 0 {
			return m[:i] + `\` + m[i:] // 1\. keeps a number from starting a list
		}
		return `\` + m
	})
}
