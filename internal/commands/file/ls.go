package file

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type lsOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Path    string
	Depth   int
	Long    bool
}

func newCmdLs(f *cmdutil.Factory) *cobra.Command {
	opts := &lsOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[lsOptions]{
		Name:  "ls",
		Short: "List a directory of the sandbox.",
		Long: "List the entries of a directory, one name per line, or with -l a table of\n" +
			"name, type, size, mode and modification time. --depth N also lists entries\n" +
			"up to N levels down, each directory's entries right after it, named relative\n" +
			"to PATH. Symbolic links are listed, never followed. -o json and -o yaml give\n" +
			"every field of every entry.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("PATH", &opts.Path)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.IntVar(&opts.Depth, "depth", 1, "How many levels to list (1: the directory's own entries).")
			fs.BoolVarP(&opts.Long, "long", "l", false, "Show type, size, mode and modification time.")
		},
		Run: runLs,
	})
}

func runLs(ctx context.Context, opts *lsOptions) error {
	if opts.Depth < 1 {
		return ops.UsageErrorf("--depth must be 1 or more, got %d", opts.Depth)
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	entries, err := dp.ListDirectory(ctx, opts.Path, opts.Depth)
	if err != nil {
		return err
	}
	p := opts.Printer()
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
		_, err := fmt.Fprint(opts.IOStreams.Out, b.String())
		return err
	}
	rows := make([]lsRow, len(entries))
	for i, e := range entries {
		rows[i] = lsRow{Name: names[i], Type: e.Type, Size: e.Size, Mode: e.Mode, Modified: e.ModifiedAt}
	}
	return p.List("", rows)
}

// lsRow is one line of ls -l.
type lsRow struct {
	Name     string      `json:"name" table:"1"`
	Type     string      `json:"type" table:"2"`
	Size     int64       `json:"size" table:"3"`
	Mode     int         `json:"mode" table:"4"`
	Modified client.Time `json:"modified" table:"5"`
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
