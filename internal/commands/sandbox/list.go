package sandbox

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

type listOptions struct {
	cmdutil.Base
	cmdutil.PageFlags
	States   []string
	Metadata cmdutil.Pairs
	All      bool
}

// sandboxStates are the canonical state names a filter accepts. Resuming is
// a state real servers report, so it is accepted too.
var sandboxStates = []string{"Pending", "Running", "Pausing", "Paused", "Resuming", "Stopping", "Terminated", "Failed", "Unknown"}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	opts := &listOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[listOptions]{
		Name:    "list",
		Aliases: []string{"ls"},
		Short:   "List sandboxes, optionally filtered by state and metadata.",
		Long: "List one page of sandboxes (the server's default page unless --page or\n" +
			"--page-size), or every sandbox with --all. Filters combine: any of the\n" +
			"given states, and all of the given metadata labels. When the server has\n" +
			"more pages, a table is followed by a note on stderr saying how to get them\n" +
			"(json and yaml carry it in pagination.has_next_page).",
		Example: "  osb sandbox list -s running -s paused\n" +
			"  osb sandbox list -m team=ml --all -q 'items.#.id'",
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringArrayVarP(&opts.States, "state", "s", nil, "Only sandboxes in this state, any case (repeatable).")
			fs.Complete("state", sandboxStates...)
			fs.Pairs(&opts.Metadata, "metadata", "m", "Only sandboxes with this metadata label KEY=VALUE (repeatable).")
			opts.PageFlags.Add(fs, "Sandboxes")
			fs.BoolVar(&opts.All, "all", false, "List every page, printed as one page: pagination says page 1 of 1\n"+
				"(total_pages 0 when empty), page_size = total_items = the number found.")
		},
		Run: runList,
	})
}

func runList(ctx context.Context, opts *listOptions) error {
	params, err := opts.params()
	if err != nil {
		return err
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	if opts.All && opts.Format == output.JSONF {
		return streamAll(ctx, opts.Printer(), c, params)
	}
	view, err := fetchList(ctx, c, params, opts.All)
	if err != nil {
		return err
	}
	view.More = ", or every page with --all"
	return view.Print(opts.Printer(), "Sandboxes", "No sandboxes found.")
}

// params validates the filters; a bad one stops the command before any request.
func (o *listOptions) params() (client.ListSandboxesParams, error) {
	p := client.ListSandboxesParams{Metadata: o.Metadata, Page: o.Page, PageSize: o.PageSize}
	for _, s := range o.States {
		state, ok := canonicalState(s)
		if !ok {
			valid := slices.Clone(sandboxStates)
			slices.Sort(valid)
			return p, ops.UsageErrorf("Invalid sandbox state '%s'. Valid values: %s", s, strings.Join(valid, ", "))
		}
		p.States = append(p.States, state)
	}
	if o.All && (o.PageSet || o.PageSizeSet) {
		return p, ops.UsageErrorf("--all lists every page; it cannot be combined with --page or --page-size")
	}
	return p, o.PageFlags.Check()
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
	return ops.NewListView(list, ops.NewSandboxView), nil
}

// streamAll prints every page as one JSON document, the same document
// listAll makes, each record written as soon as its page arrives, from the
// page's bytes (see listpass.go).
func streamAll(ctx context.Context, p *output.Printer, c *client.Client, params client.ListSandboxesParams) error {
	defer lessGC()()
	n := 0
	items := output.StreamedList(func(add func(any) error) error {
		read := func(raw []byte) (*passPage, error) { return readPassPage(c, raw) }
		return ops.WalkSandboxes(ctx, c, params, read, func(r *passRecord) string { return r.ID }, func(page *passPage) error {
			defer releasePage(page)
			n += len(page.Items)
			return add(pageRun(page))
		})
	})
	return p.Document(output.Obj{{Key: "items", Value: items}, {Key: "pagination", Value: mergedPagination{&n}}})
}

// walkGCPercent is the GC percent of a walk over every page. What a walk
// keeps is a few page buffers, a fixed 3 MiB or so, and what it drops a
// page is a few KiB: at Go's default the buffers alone start a collection
// or two that find almost nothing to free, yet cost a tenth of the walk's
// CPU time (docs/decisions/list-pass-through.md). The heap stays bounded:
// a collection comes once it is 5 times what is kept.
const walkGCPercent = 400

// lessGC raises the GC percent to walkGCPercent, unless GOGC asked for
// more; the returned func puts it back.
func lessGC() func() {
	old := debug.SetGCPercent(walkGCPercent)
	if old < 0 || old > walkGCPercent {
		debug.SetGCPercent(old)
	}
	return func() { debug.SetGCPercent(old) }
}

// mergedPagination is the pagination of a merged listing of n records; it
// is written after them, once n is known.
type mergedPagination struct{ n *int }

func (m mergedPagination) MarshalJSON() ([]byte, error) {
	return json.Marshal(allPagination(*m.n))
}

func allPagination(n int) ops.PaginationView {
	return ops.PaginationView{Page: 1, PageSize: n, TotalItems: n, TotalPages: min(n, 1)}
}

// listAll gathers every page into one, with pagination describing the
// merged result (see the --all help).
func listAll(ctx context.Context, c *client.Client, params client.ListSandboxesParams) (listView, error) {
	view := listView{Items: []ops.SandboxView{}}
	err := ops.EachSandbox(ctx, c, params, func(sb client.Sandbox) error {
		view.Items = append(view.Items, ops.NewSandboxView(&sb))
		return nil
	})
	view.Pagination = allPagination(len(view.Items))
	return view, err
}
