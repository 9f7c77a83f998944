package snapshot

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type listOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Name      string
	NameSet   bool
	States    []string
	Page      int
	PageSize  int
	Format    string
	// PageSet and PageSizeSet say the flags were given: 0 is then an error.
	PageSet, PageSizeSet bool
}

// snapshotStates are suggested for --state; the filter itself is passed on
// as typed, since servers may know more states.
var snapshotStates = []string{"Creating", "Ready", "Failed", "Deleting"}

func newCmdList(f *cmdutil.Factory, runF func(context.Context, *listOptions) error) *cobra.Command {
	opts := &listOptions{f: f}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List snapshots, optionally filtered by sandbox, name and state.",
		Long: "List one page of snapshots. Filters combine: the source sandbox, the exact\n" +
			"name, and any of the given states (sent to the server as typed).",
		Example: "  osb snapshot list --sandbox-id 3f2a0c1d --state Ready -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			opts.NameSet, opts.PageSet, opts.PageSizeSet = fl.Changed("name"), fl.Changed("page"), fl.Changed("page-size")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runList(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.SandboxID, "sandbox-id", "", "Only snapshots of this sandbox (full id).")
	fl.StringVar(&opts.Name, "name", "", "Only snapshots with exactly this name.")
	fl.StringArrayVar(&opts.States, "state", nil, "Only snapshots in this state, e.g. Ready (repeatable).")
	fl.IntVar(&opts.Page, "page", 0, "Page number, from 1.")
	fl.IntVar(&opts.PageSize, "page-size", 0, "Snapshots per page, at least 1 (the server allows at most 200).")
	_ = cmd.RegisterFlagCompletionFunc("state", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return snapshotStates, cobra.ShellCompDirectiveNoFileComp
	})
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
	params := client.ListSnapshotsParams{SandboxID: opts.SandboxID, States: opts.States, Page: opts.Page, PageSize: opts.PageSize}
	if opts.NameSet {
		params.Name = &opts.Name
	}
	list, err := c.ListSnapshots(ctx, params)
	if err != nil {
		return err
	}
	view := cmdutil.NewListView(list, newSnapshotView)
	columns := []string{"id", "name", "sandbox_id", "status", "created_at"}
	return view.Print(opts.f.Printer(opts.Format), "Snapshots", columns, snapshotView.row, "No snapshots found.")
}
