package file

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type infoOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Paths     []string
	Format    string
}

func newCmdInfo(f *cmdutil.Factory, runF func(context.Context, *infoOptions) error) *cobra.Command {
	opts := &infoOptions{f: f}
	cmd := &cobra.Command{
		Use:   "info SANDBOX_ID PATH...",
		Short: "Show the type, size, mode, owner and times of paths in the sandbox.",
		Long: "Describe each path: a symbolic link is described itself, not its target.\n" +
			"If any path does not exist, nothing is shown and the command fails.",
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Paths = args[0], args[1:]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runInfo(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runInfo(ctx context.Context, opts *infoOptions) error {
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	byPath, err := dp.FileInfo(ctx, opts.Paths)
	if err != nil {
		return err
	}
	columns := []string{"path", "size", "mode", "owner", "group", "created_at", "modified_at"}
	return opts.f.Printer(opts.Format).List("Path Info", columns, inRequestOrder(opts.Paths, byPath))
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
