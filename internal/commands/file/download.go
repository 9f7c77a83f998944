package file

import (
	"context"
	"fmt"
	"path"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/transfer"
)

type downloadOptions struct {
	cmdutil.Base
	Sandbox    cmdutil.Sandbox
	RemotePath string
	LocalPath  string
}

func newCmdDownload(f *cmdutil.Factory) *cobra.Command {
	opts := &downloadOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[downloadOptions]{
		Name:  "download",
		Short: "Download a file of the sandbox.",
		Long: "Download REMOTE_PATH to LOCAL_PATH, streaming it to disk as it arrives.\n\n" +
			"A regular file is replaced only once the whole file has arrived: until then\n" +
			"it stays as it was, and a failed or interrupted download leaves it untouched\n" +
			"(the new content is staged in a hidden .osb-download-* directory beside it,\n" +
			"and it keeps its permission bits; one that a killed download left behind is\n" +
			"removed by the next download to that directory). Missing parent directories\n" +
			"are created.\n" +
			"Named pipes and devices receive the bytes directly, so they may get part of\n" +
			"a file that fails. \"-\", /dev/stdout, or any path that is osb's standard\n" +
			"output gets the bytes alone, with no message. An existing directory as\n" +
			"LOCAL_PATH receives the file under its remote name, as cp does; a LOCAL_PATH\n" +
			"ending in / must be an existing directory. A file that cannot be written is\n" +
			"refused before anything is downloaded.",
		Args: []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("REMOTE_PATH", &opts.RemotePath),
			cmdutil.LocalPathArg("LOCAL_PATH", &opts.LocalPath)},
		Formats: cmdutil.TableFormats,
		Run:     runDownload,
	})
}

func runDownload(ctx context.Context, opts *downloadOptions) error {
	ios := opts.IOStreams
	local, err := transfer.IntoDir(opts.LocalPath, path.Base(opts.RemotePath))
	if err != nil {
		return ops.UsageErrorf("cannot download to '%s': %v", opts.LocalPath, err)
	}
	dest, err := transfer.Open(local, ios.Out)
	if err != nil {
		return ops.UsageErrorf("cannot download to '%s': %v", local, err)
	}
	defer dest.Abort()
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	dl, err := dp.Download(ctx, opts.RemotePath)
	if err != nil {
		return err
	}
	defer dl.Body.Close()
	// Bytes sent to stdout come with nothing else, not even progress.
	var progress *transfer.Progress
	if !dest.Stdout {
		progress = transfer.NewProgress(ios, opts.Format, "Downloading "+path.Base(opts.RemotePath), dl.Size)
	}
	_, err = transfer.Copy(dest, progress.Reader(dl.Body), dl.Size)
	progress.Done()
	if err != nil {
		return readFailed(ctx, opts.RemotePath, err)
	}
	if err := dest.Commit(); err != nil {
		return fmt.Errorf("cannot save the download to '%s': %w", local, err)
	}
	if dest.Stdout {
		return nil
	}
	return opts.Printer().Success("Downloaded: " + opts.RemotePath + " → " + local)
}

// readFailed explains a download that broke off. An interruption is
// reported as such (the caller prints "Aborted.").
func readFailed(ctx context.Context, remote string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("download of %s failed: %w", remote, err)
}
