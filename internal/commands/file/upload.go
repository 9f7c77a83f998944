package file

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/transfer"
)

type uploadOptions struct {
	f          *cmdutil.Factory
	SandboxID  string
	LocalPath  string
	RemotePath string
	Format     string
}

func newCmdUpload(f *cmdutil.Factory, runF func(context.Context, *uploadOptions) error) *cobra.Command {
	opts := &uploadOptions{f: f}
	cmd := &cobra.Command{
		Use:   "upload SANDBOX_ID LOCAL_PATH REMOTE_PATH",
		Short: "Upload a local file to the sandbox.",
		Long: "Upload LOCAL_PATH (\"-\" for standard input) to REMOTE_PATH in the sandbox,\n" +
			"replacing the file if it exists and creating missing parent directories. The\n" +
			"file is streamed as it is read: memory use does not grow with its size. On a\n" +
			"terminal a progress bar is shown on standard error.",
		Args:              cobra.ExactArgs(3),
		ValidArgsFunction: completeIDThenLocal(f, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID, opts.LocalPath, opts.RemotePath = args[0], args[1], args[2]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runUpload(cmd.Context(), opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runUpload(ctx context.Context, opts *uploadOptions) error {
	ios := opts.f.IOStreams
	src, size, err := openLocal(opts.LocalPath, ios.In)
	if err != nil {
		return err
	}
	defer src.Close()
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	name := filepath.Base(opts.LocalPath)
	if opts.LocalPath == "-" {
		name = "standard input"
	}
	progress := transfer.NewProgress(ios, opts.Format, "Uploading "+name, size)
	err = dp.Upload(ctx, client.FileMetadata{Path: opts.RemotePath, Mode: defaultMode}, progress.Reader(src), size)
	progress.Done()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return opts.f.Printer(opts.Format).Success("Uploaded: " + opts.LocalPath + " → " + opts.RemotePath)
}

// openLocal opens the file to upload ("-": stdin) and returns its size (-1
// when unknown). Anything that makes it unusable is a usage error, found
// before any request.
func openLocal(path string, stdin io.Reader) (io.ReadCloser, int64, error) {
	if path == "-" {
		return io.NopCloser(stdin), -1, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, cmdutil.UsageErrorf("local path '%s' does not exist", path)
	}
	if err != nil {
		return nil, 0, cmdutil.UsageErrorf("cannot read local path '%s': %v", path, errors.Unwrap(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, 0, cmdutil.UsageErrorf("local path '%s' is a directory; upload takes a file", path)
	}
	size := int64(-1)
	if fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, nil
}
