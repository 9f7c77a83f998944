package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/transfer"
)

type catOptions struct {
	cmdutil.Base
	Sandbox  cmdutil.Sandbox
	Path     string
	Encoding string
}

func newCmdCat(f *cmdutil.Factory) *cobra.Command {
	opts := &catOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[catOptions]{
		Name:  "cat",
		Short: "Print a file of the sandbox.",
		Long: "Print a file of the sandbox exactly as stored: no newline is added and\n" +
			"binary content passes through unchanged. The file is streamed, never held\n" +
			"in memory.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("PATH", &opts.Path)},
		Formats: cmdutil.RawOnly,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.Encoding, "encoding", "utf-8", "File encoding (only utf-8: bytes are printed as they are).")
		},
		Run: runCat,
	})
}

func runCat(ctx context.Context, opts *catOptions) error {
	if err := checkEncoding(opts.Encoding); err != nil {
		return err
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	dl, err := dp.Download(ctx, opts.Path)
	if err != nil {
		return err
	}
	defer dl.Body.Close()
	_, err = transfer.Copy(opts.IOStreams.Out, dl.Body, dl.Size)
	return readFailed(ctx, opts.Path, err)
}
