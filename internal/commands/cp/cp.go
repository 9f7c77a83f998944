// Package cp implements `osb cp`: files and directory trees copied between
// this machine and a sandbox, or as a tar stream, over execd's files API.
package cp

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/transfer"
)

// defaultJobs is how many files move at once: enough to hide the round trip
// of many small files, few enough not to crowd a sandbox or a shared link.
const defaultJobs = 8

type options struct {
	cmdutil.Base
	Src, Dst cmdutil.SandboxPath
	Jobs     int
	Via      string
}

// How a directory tree moves.
const (
	viaAuto  = "auto"  // tar when the sandbox can, else files
	viaTar   = "tar"   // one tar stream through a pipe-mode PTY session
	viaFiles = "files" // the files API, --jobs files at a time
)

// NewCmdCp returns `osb cp`.
func NewCmdCp(f *cmdutil.Factory) *cobra.Command {
	opts := &options{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[options]{
		Name:  "cp",
		Short: "Copy files and directories between this machine and a sandbox.",
		Long: "Copy SRC to DST, where one of them is SANDBOX_ID:PATH (a unique prefix of the id\n" +
			"is enough) and the other a local path, or \"-\" for a tar stream on standard\n" +
			"input (as SRC) or standard output (as DST). A local path with a colon in it\n" +
			"needs a slash before the colon (./a:b).\n\n" +
			"As with cp -r: a directory is copied with everything in it; into DST when DST\n" +
			"is an existing directory, else as DST; DIR/. copies what DIR holds instead, in\n" +
			"either direction. A file goes into an existing directory under its own name.\n" +
			"Permission bits and modification times are kept on every path, both ways.\n" +
			"Symbolic links are copied as links, never followed, except a SRC that is a\n" +
			"link to a directory: that directory is copied. A link is created only after\n" +
			"every file is written, so no file is ever written through one, and a tar\n" +
			"entry that would land outside DST is refused; a tar stream cut short (no\n" +
			"end-of-archive blocks) is an error, exit 1.\n\n" +
			"Files are streamed, never held in memory, --jobs at a time. A local file is\n" +
			"written under a temporary name and renamed into place once complete: a failed\n" +
			"or interrupted copy leaves no partial file. A copy that fails names the files\n" +
			"it did not write. On a terminal one progress bar shows the whole copy.\n\n" +
			"A directory tree moves as one tar stream through an execd PTY session when the\n" +
			"sandbox has the PTY API and tar (--via auto, the default): much faster for many\n" +
			"small files. --via files uses the files API alone, a request per file; --via\n" +
			"tar fails rather than fall back.",
		Example: "  osb cp ./project 3f2a:/workspace/project      # a tree into the sandbox\n" +
			"  osb cp 3f2a:/workspace/out ./results         # and results back\n" +
			"  osb cp 3f2a:/var/log/app.log .               # one file into this directory\n" +
			"  tar -cf - src | osb cp - 3f2a:/workspace     # a tar stream in\n" +
			"  osb cp 3f2a:/workspace/out - | tar -tvf -    # and out",
		Args:    []cmdutil.Arg{cmdutil.SandboxPathArg("SRC", &opts.Src), cmdutil.SandboxPathArg("DST", &opts.Dst)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.IntVarP(&opts.Jobs, "jobs", "j", defaultJobs, "Files transferred at once through the files API (1-64).")
			fs.Enum(&opts.Via, "via", "", viaAuto, []string{viaAuto, viaTar, viaFiles}, "How a directory tree moves: auto, tar or files.")
		},
		Run: run,
	})
}

func run(ctx context.Context, opts *options) error {
	if err := check(opts); err != nil {
		return err
	}
	switch {
	case opts.Src.Remote() && opts.Dst.Stream:
		return downloadTar(ctx, opts)
	case opts.Src.Remote():
		return download(ctx, opts)
	case opts.Src.Stream:
		return uploadTar(ctx, opts)
	}
	return upload(ctx, opts)
}

// check refuses what cannot be copied, before any request.
func check(opts *options) error {
	src, dst := opts.Src, opts.Dst
	switch {
	case opts.Jobs < 1 || opts.Jobs > 64:
		return ops.UsageErrorf("--jobs must be between 1 and 64, not %d", opts.Jobs)
	case src.Remote() && dst.Remote():
		return ops.UsageErrorf("both SRC and DST are in a sandbox; copy through this machine in two steps")
	case !src.Remote() && !dst.Remote():
		return ops.UsageErrorf("neither SRC nor DST names a sandbox; write one as SANDBOX_ID:PATH")
	case src.Stream && dst.Stream:
		return ops.UsageErrorf("SRC and DST cannot both be -")
	case src.Remote() && strings.TrimSpace(src.Path) == "", dst.Remote() && strings.TrimSpace(dst.Path) == "":
		return ops.UsageErrorf("give a path after the sandbox id, as in %s:/workspace", remoteOf(opts).Sandbox.ID)
	case !src.Remote() && !src.Stream && src.Path == "", !dst.Remote() && !dst.Stream && dst.Path == "":
		return ops.UsageErrorf("the local path must not be empty")
	}
	return nil
}

// remoteOf is the side in a sandbox.
func remoteOf(opts *options) cmdutil.SandboxPath {
	if opts.Src.Remote() {
		return opts.Src
	}
	return opts.Dst
}

// connect resolves the sandbox (id prefixes included) and its execd.
func connect(ctx context.Context, opts *options) (*client.DataPlane, error) {
	return remoteOf(opts).Sandbox.Execd(ctx)
}

// statRemote describes a remote path; ok is false when it does not exist.
func statRemote(ctx context.Context, dp *client.DataPlane, p string) (client.FileInfo, bool, error) {
	infos, err := dp.FileInfo(ctx, []string{p})
	if client.IsStatus(err, 404) {
		return client.FileInfo{}, false, nil
	}
	if err != nil {
		return client.FileInfo{}, false, err
	}
	fi, ok := infos[p]
	if !ok {
		return client.FileInfo{}, false, fmt.Errorf("the server did not describe %s", p)
	}
	return fi, true, nil
}

// octalDigits is a permission as execd's wire form: the octal digits read
// as a decimal number (0o755 is 755).
func octalDigits(perm uint32) int {
	n, _ := strconv.Atoi(strconv.FormatUint(uint64(perm&0o7777), 8))
	return n
}

// permOf reads execd's mode back into permission bits.
func permOf(mode int) uint32 {
	n, err := strconv.ParseUint(strconv.Itoa(mode), 8, 32)
	if err != nil {
		return 0o644
	}
	return uint32(n)
}

// failedError is a copy that wrote some files and not others: it names
// those not written, a few of them, and how many there are.
type failedError struct {
	where  string // "in the sandbox" or "here"
	failed []string
	first  error
}

func (e *failedError) Error() string {
	const shown = 10
	names := e.failed
	more := ""
	if len(names) > shown {
		more = fmt.Sprintf(" and %d more", len(names)-shown)
		names = names[:shown]
	}
	return fmt.Sprintf("%d file(s) not written %s: %s%s (first error: %v)", len(e.failed), e.where, strings.Join(names, ", "), more, e.first)
}

// summary is the result printed once a copy is done.
type summary struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Files       int    `json:"files"`
	Directories int    `json:"directories"`
	Symlinks    int    `json:"symlinks"`
	Bytes       int64  `json:"bytes"`
}

func (s summary) print(opts *options) error {
	p := opts.Printer()
	if p.Structured() {
		return p.Data(s)
	}
	return p.Success(fmt.Sprintf("Copied %s → %s (%s)", s.Source, s.Destination, s.counts()))
}

func (s summary) counts() string {
	parts := []string{plural(s.Files, "file")}
	if s.Directories > 0 {
		parts = append(parts, plural(s.Directories, "directory"))
	}
	if s.Symlinks > 0 {
		parts = append(parts, plural(s.Symlinks, "symlink"))
	}
	return strings.Join(parts, ", ") + ", " + transfer.Bytes(s.Bytes)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// remoteJoin joins remote path parts the way the sandbox's paths go.
func remoteJoin(elem ...string) string { return path.Join(elem...) }

// shellQuote makes s one word of a POSIX shell command.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
