package template

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type listOptions struct {
	f        *cmdutil.Factory
	Metadata cmdutil.Pairs
	Page     int
	PageSize int
	Format   string
	// PageSet and PageSizeSet say the flags were given: 0 is then an error.
	PageSet, PageSizeSet bool
}

func newCmdList(f *cmdutil.Factory, runF func(context.Context, *listOptions) error) *cobra.Command {
	opts := &listOptions{f: f}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List templates, optionally filtered by metadata.",
		Example: "  osb template list -m team=ml -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.PageSet, opts.PageSizeSet = cmd.Flags().Changed("page"), cmd.Flags().Changed("page-size")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runList(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	cmdutil.PairsFlag(fl, &opts.Metadata, "metadata", "m", "Only templates with this metadata label KEY=VALUE (repeatable).")
	fl.IntVar(&opts.Page, "page", 0, "Page number, from 1.")
	fl.IntVar(&opts.PageSize, "page-size", 0, "Templates per page, at least 1 (the server allows at most 200).")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runList(ctx context.Context, opts *listOptions) error {
	if err := cmdutil.CheckPageFlags(opts.PageSet, opts.Page, opts.PageSizeSet, opts.PageSize); err != nil {
		return err
	}
	c, err := opts.f.Client()
	if err != nil {
		return err
	}
	list, err := c.ListTemplates(ctx, client.ListTemplatesParams{Metadata: opts.Metadata, Page: opts.Page, PageSize: opts.PageSize})
	if err != nil {
		return err
	}
	view := cmdutil.NewListView(list, newTemplateView)
	columns := []string{"template_id", "status", "image", "format", "created_at", "updated_at"}
	return view.Print(opts.f.Printer(opts.Format), "Templates", columns, templateView.row, "No templates found.")
}
