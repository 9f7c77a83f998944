package skills

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type showOptions struct {
	cmdutil.Base
	Skill string
}

func newCmdShow(f *cmdutil.Factory) *cobra.Command {
	opts := &showOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[showOptions]{
		Name:    "show",
		Short:   "Show a bundled skill: when to use it, its quick start, and its full text.",
		Args:    []cmdutil.Arg{cmdutil.StringArg("SKILL", &opts.Skill)},
		Formats: cmdutil.TableFormats,
		Run:     runShow,
	})
}

// quickStartHeadings are tried in order; the first one a skill has is its
// quick start.
var quickStartHeadings = []string{
	"Triage Order", "Golden Paths", "Core Workflow", "Command Map",
	"Common Commands", "Fast Path", "Inspect Current Policy", "Preferred Workflow",
}

// extraHeadings are shown in the table view when a skill has them.
var extraHeadings = []string{"Minimal Closed Loops", "Response Pattern", "Guidance"}

// skillView is `skills show` under json and yaml; absent sections are null.
type skillView struct {
	Skill       string  `json:"skill"`
	Title       string  `json:"title"`
	Area        string  `json:"area"`
	Summary     string  `json:"summary"`
	TriggerHint string  `json:"trigger_hint"`
	WhenToUse   *string `json:"when_to_use"`
	QuickStart  *string `json:"quick_start"`
	JSONShapes  *string `json:"json_shapes"`
	Content     string  `json:"content"`
}

func runShow(_ context.Context, opts *showOptions) error {
	s, err := lookupSkill(opts.Skill)
	if err != nil {
		return ops.UsageErrorf("%v", err)
	}
	md := s.markdown()
	_, body, _ := splitFrontMatter(md)
	quick := ""
	for _, h := range quickStartHeadings {
		if quick = section(body, h); quick != "" {
			break
		}
	}
	view := skillView{
		Skill: s.Slug, Title: s.Title, Area: s.Area, Summary: s.Summary, TriggerHint: s.TriggerHint,
		WhenToUse:  nonEmpty(section(body, "When To Use")),
		QuickStart: nonEmpty(quick),
		JSONShapes: nonEmpty(firstJSONFence(body)),
		Content:    strings.TrimSpace(md),
	}
	printer := opts.Printer()
	if printer.Structured() {
		return printer.Data(view)
	}
	return writeShow(opts.IOStreams.Out, view, body)
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func writeShow(w io.Writer, v skillView, body string) error {
	fmt.Fprintf(w, "Skill: %s\nTitle: %s\nArea: %s\nSummary: %s\nTrigger: %s\n\n",
		v.Skill, v.Title, v.Area, v.Summary, v.TriggerHint)
	block := func(title string, text *string) {
		if text != nil {
			fmt.Fprintf(w, "%s:\n%s\n\n", title, *text)
		}
	}
	block("When To Use", v.WhenToUse)
	block("Quick Start", v.QuickStart)
	for _, h := range extraHeadings {
		block(h, nonEmpty(section(body, h)))
	}
	block("JSON Shapes", v.JSONShapes)
	_, err := fmt.Fprintf(w, "Full Skill:\n%s\n", v.Content)
	return err
}
