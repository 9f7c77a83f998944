package sandbox

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type listOptions struct {
	f        *cmdutil.Factory
	States   []string
	Metadata cmdutil.Pairs
	Page     int
	PageSize int
	// PageSet and PageSizeSet say the flags were given: 0 is then an error.
	PageSet     bool
	PageSizeSet bool
	All         bool
	Format      string
}

// sandboxStates are the canonical state names a filter accepts. Resuming is
// a state real servers report, so it is accepted too.
var sandboxStates = []string{"Pending", "Running", "Pausing", "Paused", "Resuming", "Stopping", "Terminated", "Failed", "Unknown"}

func newCmdList(f *cmdutil.Factory, runF func(context.Context, *listOptions) error) *cobra.Command {
	opts := &listOptions{f: f}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sandboxes, optionally filtered by state and metadata.",
		Long: "List one page of sandboxes (the server's default page unless --page or\n" +
			"--page-size), or every sandbox with --all. Filters combine: any of the\n" +
			"given states, and all of the given metadata labels.",
		Example: "  osb sandbox list -s running -s paused\n" +
			"  osb sandbox list -m team=ml --all -o json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.PageSet, opts.PageSizeSet = cmd.Flags().Changed("page"), cmd.Flags().Changed("page-size")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runList(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.States, "state", "s", nil, "Only sandboxes in this state, any case (repeatable).")
	cmdutil.PairsFlag(fl, &opts.Metadata, "metadata", "m", "Only sandboxes with this metadata label KEY=VALUE (repeatable).")
	fl.IntVar(&opts.Page, "page", 0, "Page number, from 1.")
	fl.IntVar(&opts.PageSize, "page-size", 0, "Sandboxes per page, at least 1 (the server allows at most 200).")
	fl.BoolVar(&opts.All, "all", false, "List every page, printed as one page: pagination says page 1 of 1\n"+
		"(total_pages 0 when empty), page_size = total_items = the number found.")
	_ = cmd.RegisterFlagCompletionFunc("state", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return sandboxStates, cobra.ShellCompDirectiveNoFileComp
	})
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runList(ctx context.Context, opts *listOptions) error {
	params, err := opts.params()
	if err != nil {
		return err
	}
	c, err := opts.f.Client()
	if err != nil {
		return err
	}
	if opts.All && opts.Format == output.JSONF {
		return streamAll(ctx, opts.f.IOStreams.Out, c, params)
	}
	view, err := fetchList(ctx, c, params, opts.All)
	if err != nil {
		return err
	}
	columns := []string{"id", "status", "image", "created_at", "expires_at"}
	return view.Print(opts.f.Printer(opts.Format), "Sandboxes", columns, sandboxView.row, "No sandboxes found.")
}

// params validates the filters; a bad one stops the command before any request.
func (o *listOptions) params() (client.ListSandboxesParams, error) {
	p := client.ListSandboxesParams{Metadata: o.Metadata, Page: o.Page, PageSize: o.PageSize}
	for _, s := range o.States {
		state, ok := canonicalState(s)
		if !ok {
			valid := slices.Clone(sandboxStates)
			slices.Sort(valid)
			return p, cmdutil.UsageErrorf("Invalid sandbox state '%s'. Valid values: %s", s, strings.Join(valid, ", "))
		}
		p.States = append(p.States, state)
	}
	if o.All && (o.PageSet || o.PageSizeSet) {
		return p, cmdutil.UsageErrorf("--all lists every page; it cannot be combined with --page or --page-size")
	}
	return p, cmdutil.CheckPageFlags(o.PageSet, o.Page, o.PageSizeSet, o.PageSize)
}

func canonicalState(s string) (string, bool) {
	for _, st := range sandboxStates {
		if strings.EqualFold(strings.TrimSpace(s), st) {
			return st, true
		}
	}
	return "", false
}

func fetchList(ctx context.Context, c *client.Client, params client.ListSandboxesParams, all bool) (listView, error) {
	if all {
		return listAll(ctx, c, params)
	}
	list, err := c.ListSandboxes(ctx, params)
	if err != nil {
		return listView{}, err
	}
	return cmdutil.NewListView(list, newSandboxView), nil
}

// streamAll prints every page as one JSON document, the same document
// listAll makes, each record written as soon as its page arrives.
func streamAll(ctx context.Context, w io.Writer, c *client.Client, params client.ListSandboxesParams) error {
	n := 0
	items := output.StreamedList(func(add func(any) error) error {
		return cmdutil.EachSandbox(ctx, c, params, func(sb client.Sandbox) error {
			n++
			return add(newSandboxView(&sb))
		})
	})
	return output.WriteJSON(w, output.Obj{{Key: "items", Value: items}, {Key: "pagination", Value: mergedPagination{&n}}})
}

// mergedPagination is the pagination of a merged listing of n records; it
// is written after them, once n is known.
type mergedPagination struct{ n *int }

func (m mergedPagination) MarshalJSON() ([]byte, error) {
	return json.Marshal(allPagination(*m.n))
}

func allPagination(n int) cmdutil.PaginationView {
	return cmdutil.PaginationView{Page: 1, PageSize: n, TotalItems: n, TotalPages: min(n, 1)}
}

// listAll gathers every page into one, with pagination describing the
// merged result (see the --all help).
func listAll(ctx context.Context, c *client.Client, params client.ListSandboxesParams) (listView, error) {
	view := listView{Items: []sandboxView{}}
	err := cmdutil.EachSandbox(ctx, c, params, func(sb client.Sandbox) error {
		view.Items = append(view.Items, newSandboxView(&sb))
		return nil
	})
	view.Pagination = allPagination(len(view.Items))
	return view, err
}
