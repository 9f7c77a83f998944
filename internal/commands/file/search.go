package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type searchOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Path    string
	Pattern string
}

func newCmdSearch(f *cmdutil.Factory) *cobra.Command {
	opts := &searchOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[searchOptions]{
		Name:    "search",
		UseTail: "-p PATTERN",
		Short:   "Find files below a directory of the sandbox.",
		Long: "List the files below PATH, at any depth, whose name matches the glob\n" +
			"--pattern (e.g. '*.py'). The pattern is matched against file names, not\n" +
			"paths; directories are not listed. The table shows path, size and owner;\n" +
			"-o json and -o yaml give every field.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("PATH", &opts.Path)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Pattern, "pattern", "p", "", "Glob pattern to search for (required).")
			fs.Required("pattern")
		},
		Run: runSearch,
	})
}

func runSearch(ctx context.Context, opts *searchOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	found, err := dp.SearchFiles(ctx, opts.Path, opts.Pattern)
	if err != nil {
		return err
	}
	p := opts.Printer()
	if len(found) == 0 && !p.Structured() {
		return p.Info("No files found.")
	}
	return p.List("Search Results", toEntries(found), "path", "size", "owner")
}
