package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/transfer"
)

type catOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Path      string
	Encoding  string
	Format    string
}

func newCmdCat(f *cmdutil.Factory, runF func(context.Context, *catOptions) error) *cobra.Command {
	opts := &catOptions{f: f}
	cmd := &cobra.Command{
		Use:   "cat SANDBOX_ID PATH",
		Short: "Print a file of the sandbox.",
		Long: "Print a file of the sandbox exactly as stored: no newline is added and\n" +
			"binary content passes through unchanged. The file is streamed, never held\n" +
			"in memory.",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.Path = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCat(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Encoding, "encoding", "utf-8", "File encoding (only utf-8: bytes are printed as they are).")
	cmdutil.OutputFlag(cmd, &opts.Format, "raw", "raw")
	return cmd
}

func runCat(ctx context.Context, opts *catOptions) error {
	if err := checkEncoding(opts.Encoding); err != nil {
		return err
	}
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	dl, err := dp.Download(ctx, opts.Path)
	if err != nil {
		return err
	}
	defer dl.Body.Close()
	_, err = transfer.Copy(opts.f.IOStreams.Out, dl.Body, dl.Size)
	return readFailed(ctx, opts.Path, err)
}
