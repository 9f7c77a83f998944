package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type replaceOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Path      string
	Old       string
	New       string
	Format    string
}

func newCmdReplace(f *cmdutil.Factory, runF func(context.Context, *replaceOptions) error) *cobra.Command {
	opts := &replaceOptions{f: f}
	cmd := &cobra.Command{
		Use:   "replace SANDBOX_ID PATH --old TEXT --new TEXT",
		Short: "Replace text in a file of the sandbox.",
		Long: "Replace every occurrence of --old with --new in PATH. The file keeps its\n" +
			"permissions. --old must not be empty.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Path = args[0], args[1]
			if opts.Old == "" {
				return cmdutil.UsageErrorf("--old must not be empty")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runReplace(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Old, "old", "", "Text to search for (required).")
	cmd.Flags().StringVar(&opts.New, "new", "", "Replacement text (required).")
	_ = cmd.MarkFlagRequired("old")
	_ = cmd.MarkFlagRequired("new")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runReplace(ctx context.Context, opts *replaceOptions) error {
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	edit := map[string]client.Replacement{opts.Path: {Old: opts.Old, New: opts.New}}
	if err := dp.ReplaceContent(ctx, edit); err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Success("Replaced in: " + opts.Path)
}
