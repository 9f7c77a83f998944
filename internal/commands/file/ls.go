package file

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type lsOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Path      string
	Depth     int
	Long      bool
	Format    string
}

func newCmdLs(f *cmdutil.Factory, runF func(context.Context, *lsOptions) error) *cobra.Command {
	opts := &lsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "ls SANDBOX_ID PATH",
		Short: "List a directory of the sandbox.",
		Long: "List the entries of a directory, one name per line, or with -l a table of\n" +
			"name, type, size, mode and modification time. --depth N also lists entries\n" +
			"up to N levels down, each directory's entries right after it, named relative\n" +
			"to PATH. Symbolic links are listed, never followed. -o json and -o yaml give\n" +
			"every field of every entry.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Path = args[0], args[1]
			if opts.Depth < 1 {
				return cmdutil.UsageErrorf("--depth must be 1 or more, got %d", opts.Depth)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runLs(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Depth, "depth", 1, "How many levels to list (1: the directory's own entries).")
	cmd.Flags().BoolVarP(&opts.Long, "long", "l", false, "Show type, size, mode and modification time.")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runLs(ctx context.Context, opts *lsOptions) error {
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	entries, err := dp.ListDirectory(ctx, opts.Path, opts.Depth)
	if err != nil {
		return err
	}
	p := opts.f.Printer(opts.Format)
	if p.Structured() {
		return p.Data(toEntries(entries))
	}
	names := relativeNames(entries)
	if !opts.Long {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(n)
			b.WriteByte('\n')
		}
		_, err := fmt.Fprint(opts.f.IOStreams.Out, b.String())
		return err
	}
	rows := make([]lsRow, len(entries))
	for i, e := range entries {
		rows[i] = lsRow{Name: names[i], Type: e.Type, Size: e.Size, Mode: e.Mode, Modified: utcMicro(e.ModifiedAt)}
	}
	return p.List("", []string{"name", "type", "size", "mode", "modified"}, rows)
}

type lsRow struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"`
	Size     int64     `json:"size"`
	Mode     int       `json:"mode"`
	Modified time.Time `json:"modified"`
}

// relativeNames names entries relative to the listed directory. The
// listing does not repeat the directory's own absolute path, but its first
// entry is always a direct child of it.
func relativeNames(entries []client.FileInfo) []string {
	names := make([]string, len(entries))
	if len(entries) == 0 {
		return names
	}
	prefix := strings.TrimSuffix(path.Dir(entries[0].Path), "/") + "/"
	for i, e := range entries {
		names[i] = strings.TrimPrefix(e.Path, prefix)
	}
	return names
}
