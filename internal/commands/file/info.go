package file

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdInfo(f *cmdutil.Factory) *cobra.Command {
	opts := &pathsOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[pathsOptions]{
		Name:  "info",
		Short: "Show the type, size, mode, owner and times of paths in the sandbox.",
		Long: "Describe each path: a symbolic link is described itself, not its target.\n" +
			"If any path does not exist, nothing is shown and the command fails.",
		Args:    opts.args(),
		Formats: cmdutil.TableFormats,
		Run:     runInfo,
	})
}

func runInfo(ctx context.Context, opts *pathsOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	byPath, err := dp.FileInfo(ctx, opts.Paths)
	if err != nil {
		return err
	}
	return opts.Printer().List("Path Info", inRequestOrder(opts.Paths, byPath))
}

// inRequestOrder lists the answer in the order the paths were given, each
// once; keys the server added or changed come last, sorted.
func inRequestOrder(paths []string, byPath map[string]client.FileInfo) []entryInfo {
	out := make([]entryInfo, 0, len(byPath))
	seen := map[string]bool{}
	for _, p := range paths {
		if fi, ok := byPath[p]; ok && !seen[p] {
			seen[p] = true
			out = append(out, toEntry(fi))
		}
	}
	var rest []string
	for k := range byPath {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		out = append(out, toEntry(byPath[k]))
	}
	return out
}
