package file

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type writeOptions struct {
	f          *cmdutil.Factory
	SandboxID  string
	Path       string
	Content    string
	HasContent bool
	Encoding   string
	Mode       int
	Owner      *string
	Group      *string
	Format     string
}

func newCmdWrite(f *cmdutil.Factory, runF func(context.Context, *writeOptions) error) *cobra.Command {
	opts := &writeOptions{f: f}
	var mode, owner, group string
	cmd := &cobra.Command{
		Use:   "write SANDBOX_ID PATH",
		Short: "Write content to a file of the sandbox.",
		Long: "Write --content, or else standard input, to PATH in the sandbox, replacing the\n" +
			"file if it exists and creating missing parent directories. Standard input is\n" +
			"streamed as it is read, so it may be of any size.\n\n" +
			"--mode is the permission as digits, e.g. 644 or 0755 (default 755).",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Path = args[0], args[1]
			opts.HasContent = cmd.Flags().Changed("content")
			var err error
			if opts.Mode, err = modeFlag(cmd, mode); err != nil {
				return err
			}
			opts.Owner, opts.Group = optional(cmd, "owner", owner), optional(cmd, "group", group)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runWrite(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Content, "content", "c", "", "Content to write; standard input when not given.")
	cmd.Flags().StringVar(&opts.Encoding, "encoding", "utf-8", "File encoding (only utf-8: text is written as it is).")
	cmd.Flags().StringVar(&mode, "mode", "", "File permission mode, e.g. 644 or 0755 (default 755).")
	cmd.Flags().StringVar(&owner, "owner", "", "File owner.")
	cmd.Flags().StringVar(&group, "group", "", "File group.")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runWrite(ctx context.Context, opts *writeOptions) error {
	if err := checkEncoding(opts.Encoding); err != nil {
		return err
	}
	ios := opts.f.IOStreams
	var content io.Reader = strings.NewReader(opts.Content)
	size := int64(len(opts.Content))
	if !opts.HasContent {
		if ios.IsStdinTTY() {
			fmt.Fprintln(ios.ErrOut, "Reading from stdin (Ctrl+D to finish):")
		}
		content, size = ios.In, -1
	}
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	meta := client.FileMetadata{Path: opts.Path, Mode: opts.Mode, Owner: opts.Owner, Group: opts.Group}
	if err := dp.Upload(ctx, meta, content, size); err != nil {
		return err
	}
	return opts.f.Printer(opts.Format).Success("Written: " + opts.Path)
}
