package snapshot

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
	SandboxID string
	Name      string
	NameSet   bool
	States    []string
}

// snapshotStates are suggested for --state; the filter itself is passed on
// as typed, since servers may know more states.
var snapshotStates = []string{"Creating", "Ready", "Failed", "Deleting"}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	opts := &listOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[listOptions]{
		Name:    "list",
		Aliases: []string{"ls"},
		Short:   "List snapshots, optionally filtered by sandbox, name and state.",
		Long: "List one page of snapshots. Filters combine: the source sandbox, the exact\n" +
			"name, and any of the given states (sent to the server as typed).",
		Example: "  osb snapshot list --sandbox-id 3f2a0c1d --state Ready -o json",
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.SandboxID, "sandbox-id", "", "Only snapshots of this sandbox (full id).")
			fs.StringVar(&opts.Name, "name", "", "Only snapshots with exactly this name.")
			fs.Given("name", &opts.NameSet)
			fs.StringArrayVar(&opts.States, "state", nil, "Only snapshots in this state, e.g. Ready (repeatable).")
			fs.Complete("state", snapshotStates...)
			opts.PageFlags.Add(fs, "Snapshots")
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
	params := client.ListSnapshotsParams{SandboxID: opts.SandboxID, States: opts.States, Page: opts.Page, PageSize: opts.PageSize}
	if opts.NameSet {
		params.Name = &opts.Name
	}
	list, err := c.ListSnapshots(ctx, params)
	if err != nil {
		return err
	}
	return ops.NewListView(list, newSnapshotView).Print(opts.Printer(), "Snapshots", "No snapshots found.")
}
