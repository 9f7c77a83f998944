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
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/transfer"
)

type uploadOptions struct {
	cmdutil.Base
	Sandbox    cmdutil.Sandbox
	LocalPath  string
	RemotePath string
}

func newCmdUpload(f *cmdutil.Factory) *cobra.Command {
	opts := &uploadOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[uploadOptions]{
		Name:  "upload",
		Short: "Upload a local file to the sandbox.",
		Long: "Upload LOCAL_PATH (\"-\" for standard input) to REMOTE_PATH in the sandbox,\n" +
			"replacing the file if it exists and creating missing parent directories. The\n" +
			"file is streamed as it is read: memory use does not grow with its size. On a\n" +
			"terminal a progress bar is shown on standard error.",
		Args: []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.LocalPathArg("LOCAL_PATH", &opts.LocalPath),
			cmdutil.StringArg("REMOTE_PATH", &opts.RemotePath)},
		Formats: cmdutil.TableFormats,
		Run:     runUpload,
	})
}

func runUpload(ctx context.Context, opts *uploadOptions) error {
	ios := opts.IOStreams
	src, size, err := openLocal(opts.LocalPath, ios.In)
	if errors.Is(err, errIsDir) {
		return ops.UsageErrorf("local path '%s' is a directory; upload takes a file ('osb cp %s %s:%s' copies a directory)",
			opts.LocalPath, opts.LocalPath, opts.Sandbox.ID, opts.RemotePath)
	}
	if err != nil {
		return err
	}
	defer src.Close()
	dp, err := opts.Sandbox.Execd(ctx)
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
	return opts.Printer().Success("Uploaded: " + opts.LocalPath + " → " + opts.RemotePath)
}

// errIsDir is a directory given where a file is wanted.
var errIsDir = errors.New("is a directory")

// openLocal opens the file to upload ("-": stdin) and returns its size (-1
// when unknown). Anything that makes it unusable is a usage error, found
// before any request.
func openLocal(path string, stdin io.Reader) (io.ReadCloser, int64, error) {
	if path == "-" {
		return io.NopCloser(stdin), -1, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, ops.UsageErrorf("local path '%s' does not exist", path)
	}
	if err != nil {
		return nil, 0, ops.UsageErrorf("cannot read local path '%s': %v", path, errors.Unwrap(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, 0, errIsDir
	}
	size := int64(-1)
	if fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, nil
}
