package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type replaceOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Path    string
	Old     string
	New     string
}

func newCmdReplace(f *cmdutil.Factory) *cobra.Command {
	opts := &replaceOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[replaceOptions]{
		Name:    "replace",
		UseTail: "--old TEXT --new TEXT",
		Short:   "Replace text in a file of the sandbox.",
		Long: "Replace every occurrence of --old with --new in PATH. The file keeps its\n" +
			"permissions. --old must not be empty.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("PATH", &opts.Path)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.Old, "old", "", "Text to search for (required).")
			fs.StringVar(&opts.New, "new", "", "Replacement text (required).")
			fs.Required("old", "new")
		},
		Run: runReplace,
	})
}

func runReplace(ctx context.Context, opts *replaceOptions) error {
	if opts.Old == "" {
		return ops.UsageErrorf("--old must not be empty")
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	edit := map[string]client.Replacement{opts.Path: {Old: opts.Old, New: opts.New}}
	if err := dp.ReplaceContent(ctx, edit); err != nil {
		return err
	}
	return opts.Printer().Success("Replaced in: " + opts.Path)
}
