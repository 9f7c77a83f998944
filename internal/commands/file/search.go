package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type searchOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Path      string
	Pattern   string
	Format    string
}

func newCmdSearch(f *cmdutil.Factory, runF func(context.Context, *searchOptions) error) *cobra.Command {
	opts := &searchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "search SANDBOX_ID PATH -p PATTERN",
		Short: "Find files below a directory of the sandbox.",
		Long: "List the files below PATH, at any depth, whose name matches the glob\n" +
			"--pattern (e.g. '*.py'). The pattern is matched against file names, not\n" +
			"paths; directories are not listed. The table shows path, size and owner;\n" +
			"-o json and -o yaml give every field.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Path = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSearch(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Pattern, "pattern", "p", "", "Glob pattern to search for (required).")
	_ = cmd.MarkFlagRequired("pattern")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runSearch(ctx context.Context, opts *searchOptions) error {
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	found, err := dp.SearchFiles(ctx, opts.Path, opts.Pattern)
	if err != nil {
		return err
	}
	p := opts.f.Printer(opts.Format)
	if len(found) == 0 && !p.Structured() {
		return p.Info("No files found.")
	}
	return p.List("Search Results", []string{"path", "size", "owner"}, toEntries(found))
}
