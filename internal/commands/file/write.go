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
	cmdutil.Base
	Sandbox    cmdutil.Sandbox
	Path       string
	Content    string
	HasContent bool
	Encoding   string
	perm       permFlags
}

func newCmdWrite(f *cmdutil.Factory) *cobra.Command {
	opts := &writeOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[writeOptions]{
		Name:  "write",
		Short: "Write content to a file of the sandbox.",
		Long: "Write --content, or else standard input, to PATH in the sandbox, replacing the\n" +
			"file if it exists and creating missing parent directories. Standard input is\n" +
			"streamed as it is read, so it may be of any size.\n\n" +
			"--mode is the permission as digits, e.g. 644 or 0755 (default 755). A mode with\n" +
			"the setuid, setgid or sticky bit is checked afterwards, as 'osb file chmod' does.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("PATH", &opts.Path)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Content, "content", "c", "", "Content to write; standard input when not given.")
			fs.Given("content", &opts.HasContent)
			fs.StringVar(&opts.Encoding, "encoding", "utf-8", "File encoding (only utf-8: text is written as it is).")
			opts.perm.add(fs, "File permission mode, e.g. 644 or 0755 (default 755).", "File")
		},
		Run: runWrite,
	})
}

func runWrite(ctx context.Context, opts *writeOptions) error {
	if err := checkEncoding(opts.Encoding); err != nil {
		return err
	}
	perm, err := opts.perm.permission()
	if err != nil {
		return err
	}
	ios := opts.IOStreams
	var content io.Reader = strings.NewReader(opts.Content)
	size := int64(len(opts.Content))
	if !opts.HasContent {
		if ios.IsStdinTTY() {
			fmt.Fprintln(ios.ErrOut, "Reading from stdin (Ctrl+D to finish):")
		}
		content, size = ios.In, -1
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	meta := client.FileMetadata{Path: opts.Path, Mode: perm.Mode, Owner: perm.Owner, Group: perm.Group}
	if err := dp.Upload(ctx, meta, content, size); err != nil {
		return err
	}
	if err := checkSpecialBits(ctx, dp, opts.Path, perm.Mode); err != nil {
		return err
	}
	return opts.Printer().Success("Written: " + opts.Path)
}
