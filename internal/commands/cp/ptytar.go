package cp

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/transfer"
)

// A directory tree can also move as one tar stream through a pipe-mode PTY
// session (tar running in the sandbox): one connection instead of a request
// per file, which is what makes many small files fast. It needs execd's PTY
// API and tar (and head) in the sandbox; without them the files API is used.

// errNoTarPath says the tar path is not available in this sandbox.
var errNoTarPath = errors.New("this sandbox cannot stream a tar (no PTY API or no tar)")

// exitNotFound is what the scripts exit with when a tool is missing.
const exitNotFound = 127

// runPTY runs script in a pipe-mode PTY session of its own, streams stdin
// (nil: none; the script reads a length it knows) to it, copies its
// stdout to stdout, and returns its exit code and the start of its stderr.
// The session is deleted afterwards.
func runPTY(ctx context.Context, dp *client.DataPlane, script string, stdin io.Reader, stdout io.Writer) (int, string, error) {
	s, err := ops.StartCommand(ctx, dp, ops.Command{Script: script, Stdin: stdin, Sized: stdin != nil})
	if client.IsStatus(err, http.StatusNotFound) {
		return 0, "", errNoTarPath
	}
	if err != nil {
		return 0, "", err
	}
	defer s.Delete(ctx)
	out := &tarOutput{stdout: stdout}
	s.Out = out
	res := s.Run(ctx)
	switch {
	case res.Exited && res.ExitCode != nil:
		return *res.ExitCode, out.stderr.String(), nil
	case res.Exited:
		return -1, out.stderr.String(), nil
	case res.Lost != nil:
		return 0, out.stderr.String(), res.Lost
	case res.TakenOver:
		return 0, out.stderr.String(), errors.New("another client took the tar session over")
	}
	return 0, out.stderr.String(), res.Err
}

// tarOutput takes a tar session's output: stdout is the stream, the start
// of stderr (and any word from the server) explains a failure.
type tarOutput struct {
	stdout io.Writer
	stderr strings.Builder
}

func (o *tarOutput) Stdout(p []byte) error {
	_, err := o.stdout.Write(p)
	return err
}

func (o *tarOutput) Stderr(p []byte) error {
	if o.stderr.Len() < 4096 {
		o.stderr.Write(p)
	}
	return nil
}

func (o *tarOutput) Note(msg string) { o.Stderr([]byte(msg + "\n")) }

// downloadViaTar streams the remote directory remote into root as a tar,
// extracting it as it comes. It returns errNoTarPath, having written
// nothing, when the sandbox cannot do it.
func downloadViaTar(ctx context.Context, opts *options, dp *client.DataPlane, remote, root string) (*tree, error) {
	script := "command -v tar >/dev/null || exit 127\ncd -- " + shellQuote(remote) + " || exit 1\nexec tar -cf - ."
	pr, pw := io.Pipe()
	progress := transfer.NewProgress(opts.IOStreams, opts.Format, "Copying "+remote, -1)
	type result struct {
		code   int
		stderr string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		code, stderr, err := runPTY(ctx, dp, script, nil, pw)
		pw.CloseWithError(err) // a stream cut off says why, not only that it ended early
		done <- result{code, stderr, err}
	}()
	x := &extractor{root: root, progress: progress, written: map[string]bool{}, dirs: map[string]bool{}}
	if progress != nil {
		// The total comes from one listing, made while tar starts.
		total := make(chan int64, 1)
		go func() { total <- remoteBytes(ctx, dp, remote) }()
		x.total = total
	}
	// Whole frames at a time rather than a pipe handover per tar block.
	in := bufio.NewReaderSize(pr, 256<<10)
	xerr := x.extract(in)
	if err := x.closeStage(); xerr == nil {
		xerr = err
	}
	if xerr == nil {
		io.Copy(io.Discard, in) // tar pads its output past the end of the archive
	}
	pr.CloseWithError(errors.New("extraction stopped"))
	res := <-done
	progress.Done()
	switch {
	case errors.Is(res.err, errNoTarPath), res.err == nil && res.code == exitNotFound && x.t.files+x.t.dirs == 0:
		return nil, errNoTarPath
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	err := xerr
	if err == nil && res.err != nil {
		err = res.err
	}
	// A tar that failed cuts its stream short: its own message says why.
	if (err == nil || errors.Is(err, errNoTrailer) || errors.Is(err, errEmptyTar)) && res.err == nil && res.code != 0 {
		err = fmt.Errorf("tar in the sandbox exited %d: %s", res.code, strings.TrimSpace(res.stderr))
	}
	if err == nil && len(x.failed) > 0 {
		err = x.firstErr
	}
	if err != nil {
		return nil, x.notWritten(ctx, dp, remote, err)
	}
	return &x.t, x.finish()
}

// extractor unpacks a tar stream under root, safely: names that climb out
// are refused, nothing is written through a symlink (links are made last),
// no file is seen partial (fileStage), directory modes come last.
type extractor struct {
	root     string
	stage    fileStage // made by begin
	progress *transfer.Progress
	total    <-chan int64 // the bytes to come (-1: unknown); nil once read
	t        tree
	written  map[string]bool // rel paths of files written
	dirs     map[string]bool // rel paths of directories made or found, none a symlink
	links    []entry
	hard     [][2]string // rel link, rel target
	failed   []string
	firstErr error
}

func (x *extractor) fail(rel string, err error) {
	x.failed = append(x.failed, rel)
	if x.firstErr == nil {
		x.firstErr = err
	}
}

// fileStage is where the files of a copy are made (under Root), so that
// none is ever seen partial; Close puts them in place and cleans up.
type fileStage interface {
	Root() string
	Open(path string) (*transfer.Destination, error)
	Close() error
}

// begin decides where files go: a root that is not there yet is built
// whole out of sight and put in place at the end (transfer.TreeStage);
// files going into one that is there are staged each (transfer.Stage).
func (x *extractor) begin() error {
	if _, err := os.Lstat(x.root); !errors.Is(err, fs.ErrNotExist) {
		stage, err := transfer.NewStage(x.root)
		if err != nil {
			return err
		}
		x.stage = stage
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(x.root), 0o755); err != nil {
		return err
	}
	tree, err := transfer.NewTreeStage(x.root)
	if err != nil {
		return err
	}
	x.stage = tree
	return nil
}

func (x *extractor) extract(r io.Reader) error {
	if err := x.begin(); err != nil {
		return err
	}
	in := &trailerReader{r: r}
	tr := tar.NewReader(in)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) && !in.ended() {
			return in.cutShort()
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the tar stream broke off: %w", err)
		}
		if strings.Trim(hdr.Name, "./") == "" {
			if hdr.Typeflag == tar.TypeDir {
				x.t.entries = append(x.t.entries, entry{rel: ".", kind: kindDir, perm: uint32(hdr.FileInfo().Mode().Perm()), mod: hdr.ModTime})
			}
			continue
		}
		rel, err := cleanRel(hdr.Name)
		if err != nil {
			x.fail(hdr.Name, err)
			continue
		}
		e := entry{rel: rel, perm: uint32(hdr.FileInfo().Mode().Perm()), size: hdr.Size, mod: hdr.ModTime}
		switch hdr.Typeflag {
		case tar.TypeDir:
			e.kind = kindDir
			if err := x.mkdir(rel); err != nil {
				x.fail(rel, err)
				continue
			}
		case tar.TypeReg:
			e.kind = kindFile
			if err := x.file(rel, e.perm, e.mod, tr, hdr.Size); err != nil {
				x.fail(rel, err)
				continue
			}
			x.written[rel] = true
		case tar.TypeSymlink:
			e.kind, e.link = kindLink, hdr.Linkname
			x.links = append(x.links, e)
		case tar.TypeLink:
			target, err := cleanRel(hdr.Linkname)
			if err != nil {
				x.fail(rel, err)
				continue
			}
			x.hard = append(x.hard, [2]string{rel, target})
			e.kind = kindFile
		default:
			continue // devices and pipes: nothing to copy
		}
		x.t.add(e)
	}
}

// path is where rel goes under root, its directories checked by
// localPath once each: tar sends a directory before what it holds.
func (x *extractor) path(rel string) (string, error) {
	if dir := path.Dir(rel); dir == "." || x.dirs[dir] {
		return filepath.Join(x.stage.Root(), filepath.FromSlash(rel)), nil
	}
	return localPath(x.stage.Root(), rel)
}

func (x *extractor) mkdir(rel string) error {
	p, err := x.path(rel)
	if err != nil {
		return err
	}
	if err := os.Mkdir(p, 0o700); errors.Is(err, fs.ErrExist) {
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is in the way of a directory", p)
		}
	} else if err != nil {
		return err
	}
	x.dirs[rel] = true
	return nil
}

// file writes one file, staged; a symlink in its place is replaced (the
// stage never follows it).
func (x *extractor) file(rel string, perm uint32, mod time.Time, r io.Reader, size int64) error {
	p, err := x.path(rel)
	if err != nil {
		return err
	}
	dest, err := x.stage.Open(p)
	if err != nil {
		return err
	}
	defer dest.Abort()
	dest.SetMode(fs.FileMode(perm))
	x.awaitTotal()
	if _, err := transfer.Copy(dest, x.progress.Reader(r), size); err != nil {
		return err
	}
	if err := dest.Commit(); err != nil {
		return err
	}
	return stampLocal(p, mod)
}

// closeStage puts the files in place (a staged tree, whole files and
// all, whether the copy succeeded or not) and removes what staged them,
// before the directory modes and times are set: removing a staging
// directory changes root, and a read-only root would keep it.
func (x *extractor) closeStage() error {
	stage := x.stage
	x.stage = nil
	if stage == nil {
		return nil
	}
	return stage.Close()
}

// awaitTotal gives the progress display its total before the first bytes
// are counted. The listing started with the tar session and has usually
// arrived by the time data flows; waiting for it here rather than drawing
// a bar without a total and fixing it later keeps the display simple, and
// the wait is at most the listing's own time, on a terminal only.
func (x *extractor) awaitTotal() {
	if x.total == nil {
		return
	}
	if n := <-x.total; n >= 0 {
		x.progress.SetTotal(n)
	}
	x.total = nil
}

// remoteBytes is the size of the files under remote, from one listing, or
// -1 when it cannot be listed. A file with several hard links counts once
// per link, where tar sends it once: the bar then ends short of its total.
func remoteBytes(ctx context.Context, dp *client.DataPlane, remote string) int64 {
	infos, err := dp.ListDirectory(ctx, remote, listDepth)
	if err != nil {
		return -1
	}
	var n int64
	for _, fi := range infos {
		if fi.Type == "file" {
			n += fi.Size
		}
	}
	return n
}

// finish makes the hard and symbolic links, then gives directories their
// modes, deepest first.
func (x *extractor) finish() error {
	for _, h := range x.hard {
		from, err := localPath(x.root, h[1])
		if err == nil {
			var to string
			if to, err = localPath(x.root, h[0]); err == nil {
				os.Remove(to)
				err = os.Link(from, to)
			}
		}
		if err != nil {
			return err
		}
		x.written[h[0]] = true
	}
	for _, e := range x.links {
		if err := placeLink(x.root, e); err != nil {
			return err
		}
	}
	dirs := x.t.of(kindDir)
	slices.Reverse(dirs)
	for _, e := range dirs {
		p := filepath.Join(x.root, filepath.FromSlash(e.rel))
		if err := os.Chmod(p, fs.FileMode(e.perm)); err != nil {
			return err
		}
		if err := stampLocal(p, e.mod); err != nil {
			return err
		}
	}
	return nil
}

// notWritten names the remote files that did not arrive, from a listing of
// the remote tree; the listing failing, those that failed on the way.
func (x *extractor) notWritten(ctx context.Context, dp *client.DataPlane, remote string, cause error) error {
	missing := slices.Clone(x.failed)
	if t, err := listRemote(ctx, dp, remote); err == nil {
		missing = missing[:0]
		for _, e := range t.of(kindFile) {
			if !x.written[e.rel] {
				missing = append(missing, e.rel)
			}
		}
	}
	for i, rel := range missing {
		missing[i] = filepath.Join(x.root, filepath.FromSlash(rel))
	}
	if len(missing) == 0 {
		return cause
	}
	return &failedError{where: "here", failed: missing, first: cause}
}

// uploadViaTar sends the local tree t (rooted at local) as one tar stream
// to tar in the sandbox, which unpacks it into target. head stops the
// stream at its exact length: a real execd cannot end a session's input,
// and tar reads to the end of its input. It returns errNoTarPath, having changed
// nothing, when the sandbox cannot do it.
func uploadViaTar(ctx context.Context, opts *options, dp *client.DataPlane, local, target string, t *tree) error {
	size, err := tarSize(t)
	if err != nil {
		return err
	}
	// umask 0: tar run by a user other than root masks the archive's
	// modes with it (0775 came out 0755). The tree's own directory, when
	// the copy makes it, gets its mode and time once tar has filled it.
	script := fmt.Sprintf("command -v tar >/dev/null && command -v head >/dev/null || exit 127\n"+
		"mkdir -p -- %s && cd -- %s || exit 1\numask 0\nhead -c %d | tar -xf -",
		shellQuote(target), shellQuote(target), size)
	if r := t.root; r != nil {
		script += fmt.Sprintf(" || exit 1\nchmod %o . && touch -c -m -d @%d.%09d .", r.perm, r.mod.Unix(), r.mod.Nanosecond())
	}
	progress := transfer.NewProgress(opts.IOStreams, opts.Format, "Copying "+plural(t.files, "file"), t.bytes)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(pw, local, t, progress)) }()
	var out strings.Builder
	code, stderr, err := runPTY(ctx, dp, script, pr, &out)
	pr.CloseWithError(errors.New("upload ended"))
	progress.Done()
	switch {
	case errors.Is(err, errNoTarPath), err == nil && code == exitNotFound:
		return errNoTarPath
	case ctx.Err() != nil:
		return ctx.Err()
	case err == nil && code != 0:
		err = fmt.Errorf("tar in the sandbox exited %d: %s", code, strings.TrimSpace(stderr+out.String()))
	}
	if err != nil {
		return remoteNotWritten(ctx, dp, target, t, err)
	}
	return nil
}

// remoteNotWritten names the files of t missing in the sandbox (or of
// another size), from a listing of target.
func remoteNotWritten(ctx context.Context, dp *client.DataPlane, target string, t *tree, cause error) error {
	there := map[string]int64{}
	if rt, err := listRemote(ctx, dp, target); err == nil {
		for _, e := range rt.of(kindFile) {
			there[e.rel] = e.size
		}
	}
	var missing []string
	for _, e := range t.of(kindFile) {
		if size, ok := there[e.rel]; !ok || size != e.size {
			missing = append(missing, remoteJoin(target, e.rel))
		}
	}
	if len(missing) == 0 {
		return cause
	}
	return &failedError{where: "in the sandbox", failed: missing, first: cause}
}

// header is the tar header of one entry of a local tree.
func header(e entry) *tar.Header {
	h := &tar.Header{Name: e.rel, Mode: int64(e.perm), ModTime: e.mod, Format: tar.FormatPAX}
	switch e.kind {
	case kindDir:
		h.Typeflag, h.Name = tar.TypeDir, e.rel+"/"
	case kindLink:
		h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
	case kindFile:
		h.Typeflag, h.Size = tar.TypeReg, e.size
	}
	return h
}

// tarSize is the exact length of writeTar's stream for t, worked out from
// the headers alone: each entry's header (with any PAX record) as a tar
// writer renders it, its content padded to 512 bytes, and the two zero
// blocks that end the archive.
func tarSize(t *tree) (int64, error) {
	var n int64
	for _, e := range t.entries {
		var c counter
		if err := tar.NewWriter(&c).WriteHeader(header(e)); err != nil {
			return 0, err
		}
		n += int64(c)
		if e.kind == kindFile {
			n += (e.size + 511) / 512 * 512
		}
	}
	return n + 1024, nil
}

type counter int64

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

// writeTar writes the local tree as a tar stream, each file exactly as
// long as it was when walked (a file that changed size since is an error:
// the stream's length was announced).
func writeTar(w io.Writer, local string, t *tree, progress *transfer.Progress) error {
	// Whole frames rather than one per header and per small file.
	bw := bufio.NewWriterSize(w, 256<<10)
	tw := tar.NewWriter(bw)
	for _, e := range t.entries {
		if err := tw.WriteHeader(header(e)); err != nil {
			return err
		}
		if e.kind != kindFile {
			continue
		}
		f, err := os.Open(filepath.Join(local, filepath.FromSlash(e.rel)))
		if err != nil {
			return err
		}
		_, err = io.CopyN(tw, progress.Reader(f), e.size)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s changed while being copied: %w", e.rel, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}
