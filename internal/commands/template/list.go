package template

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type listOptions struct {
	cmdutil.Base
	cmdutil.PageFlags
	Metadata cmdutil.Pairs
}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	opts := &listOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[listOptions]{
		Name:    "list",
		Aliases: []string{"ls"},
		Short:   "List templates, optionally filtered by metadata.",
		Example: "  osb template list -m team=ml -o json",
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.Pairs(&opts.Metadata, "metadata", "m", "Only templates with this metadata label KEY=VALUE (repeatable).")
			opts.PageFlags.Add(fs, "Templates")
		},
		Run: runList,
	})
}

func runList(ctx context.Context, opts *listOptions) error {
	if err := opts.PageFlags.Check(); err != nil {
		return err
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	list, err := c.ListTemplates(ctx, client.ListTemplatesParams{Metadata: opts.Metadata, Page: opts.Page, PageSize: opts.PageSize})
	if err != nil {
		return err
	}
	return ops.NewListView(list, newTemplateView).Print(opts.Printer(), "Templates", "No templates found.")
}
