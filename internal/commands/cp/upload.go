package cp

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/transfer"
)

// upload copies a local file or tree into the sandbox.
func upload(ctx context.Context, opts *options) error {
	local := opts.Src.Path
	fi, err := os.Stat(local)
	if errors.Is(err, fs.ErrNotExist) {
		return ops.UsageErrorf("local path '%s' does not exist", local)
	}
	if err != nil {
		return ops.UsageErrorf("cannot read local path '%s': %v", local, errors.Unwrap(err))
	}
	var t *tree
	if fi.IsDir() {
		// A symlink to a directory, named as the source, is followed, as
		// the user asked for that directory (a link inside it is not).
		walkRoot := local
		if lfi, err := os.Lstat(local); err == nil && lfi.Mode()&os.ModeSymlink != 0 {
			if walkRoot, err = filepath.EvalSymlinks(local); err != nil {
				return ops.UsageErrorf("cannot read local path '%s': %v", local, err)
			}
		}
		if t, err = walkLocal(walkRoot); err != nil {
			return ops.UsageErrorf("cannot read local path '%s': %v", local, err)
		}
	} else if !fi.Mode().IsRegular() {
		return ops.UsageErrorf("local path '%s' is not a regular file or a directory", local)
	}
	dp, err := connect(ctx, opts)
	if err != nil {
		return err
	}
	target, err := uploadTarget(ctx, dp, opts.Dst.Path, local, fi.IsDir())
	if err != nil {
		return err
	}
	shown := opts.Dst.Sandbox.ID + ":" + target
	if t == nil {
		return uploadOne(ctx, opts, dp, local, target, fi, shown)
	}
	if !intoContents(local) {
		t.root = &entry{rel: ".", kind: kindDir, perm: uint32(fi.Mode().Perm()), mod: fi.ModTime()}
	}
	return uploadTree(ctx, opts, dp, local, target, t, shown)
}

// uploadOne uploads a single file with its mode.
func uploadOne(ctx context.Context, opts *options, dp *client.DataPlane, local, target string, fi fs.FileInfo, shown string) error {
	f, err := os.Open(local)
	if err != nil {
		return ops.UsageErrorf("cannot read local path '%s': %v", local, errors.Unwrap(err))
	}
	defer f.Close()
	progress := transfer.NewProgress(opts.IOStreams, opts.Format, "Copying "+filepath.Base(local), fi.Size())
	err = dp.Upload(ctx, client.FileMetadata{Path: target, Mode: octalDigits(uint32(fi.Mode().Perm()))}, progress.Reader(f), fi.Size())
	progress.Done()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &failedError{where: "in the sandbox", failed: []string{target}, first: err}
	}
	if err := stampRemote(ctx, dp, []stamp{{target, fi.ModTime()}}); err != nil {
		return err
	}
	return summary{Source: opts.Src.Raw, Destination: shown, Files: 1, Bytes: fi.Size()}.print(opts)
}

// intoContents reports whether a local directory is named as DIR/. (or
// "."): its contents are copied, into a destination that may be there.
func intoContents(local string) bool { return strings.HasSuffix(local, "/.") || local == "." }

// uploadTarget is where the copy of local goes, as cp decides: inside dst
// when dst is a directory, else dst itself.
func uploadTarget(ctx context.Context, dp *client.DataPlane, dst, local string, isDir bool) (string, error) {
	info, exists, err := statRemote(ctx, dp, dst)
	if err != nil {
		return "", err
	}
	name := filepath.Base(filepath.Clean(local))
	intoContents := isDir && intoContents(local)
	switch {
	case exists && info.Type == "directory" && !intoContents:
		if name == "." || name == "/" {
			return dst, nil
		}
		return remoteJoin(dst, name), nil
	case exists && info.Type == "directory":
		return dst, nil
	case exists && isDir:
		return "", ops.UsageErrorf("cannot copy directory '%s' onto %s: it is not a directory", local, dst)
	case !exists && !isDir && strings.HasSuffix(dst, "/"):
		return "", ops.UsageErrorf("%s: no such directory in the sandbox", dst)
	}
	return strings.TrimSuffix(dst, "/"), nil
}

// uploadTree creates the tree's directories, uploads its files, then its
// symlinks, and gives directories their modes last (a read-only directory
// still receives its files).
func uploadTree(ctx context.Context, opts *options, dp *client.DataPlane, local, target string, t *tree, shown string) error {
	done := summary{Source: opts.Src.Raw, Destination: shown, Files: t.files, Directories: t.dirs + 1, Symlinks: t.links, Bytes: t.bytes}
	if opts.Via != viaFiles {
		err := uploadViaTar(ctx, opts, dp, local, target, t)
		if err == nil {
			return done.print(opts)
		}
		if !errors.Is(err, errNoTarPath) || opts.Via == viaTar {
			return err
		}
	}
	dirs := map[string]client.Permission{target: {Mode: 755}}
	// Every directory gets its mode at the end, not only the read-only
	// ones: execd creates a map's directories in no fixed order, and a
	// parent made on the way to its child takes the child's mode, so a
	// 700 directory came out 755 in some runs.
	later := map[string]client.Permission{}
	if t.root != nil {
		later[target] = client.Permission{Mode: octalDigits(t.root.perm)}
	}
	for _, e := range t.of(kindDir) {
		p := remoteJoin(target, e.rel)
		dirs[p] = client.Permission{Mode: octalDigits(e.perm | 0o700)}
		later[p] = client.Permission{Mode: octalDigits(e.perm)}
	}
	if err := dp.CreateDirectories(ctx, dirs); err != nil {
		return fmt.Errorf("cannot create the directories under %s: %w", target, err)
	}
	if err := uploadFilesOnly(ctx, opts, dp, local, target, t); err != nil {
		return err
	}
	links := map[string]string{}
	for _, e := range t.of(kindLink) {
		links[remoteJoin(target, e.rel)] = e.link
	}
	if err := makeLinks(ctx, dp, links); err != nil {
		return err
	}
	if err := stampRemote(ctx, dp, t.stamps(target)); err != nil {
		return err
	}
	if err := dp.SetPermissions(ctx, later); err != nil {
		return fmt.Errorf("cannot set the directories' modes: %w", err)
	}
	return done.print(opts)
}

// uploadFilesOnly streams every file of t, jobs at a time, under one
// progress display.
func uploadFilesOnly(ctx context.Context, opts *options, dp *client.DataPlane, local, target string, t *tree) error {
	files := t.of(kindFile)
	progress := transfer.NewProgress(opts.IOStreams, opts.Format, fmt.Sprintf("Copying %s", plural(len(files), "file")), t.bytes)
	notDone, err := pool(ctx, opts.Jobs, files, func(ctx context.Context, e entry) error {
		f, err := os.Open(filepath.Join(local, filepath.FromSlash(e.rel)))
		if err != nil {
			return err
		}
		defer f.Close()
		meta := client.FileMetadata{Path: remoteJoin(target, e.rel), Mode: octalDigits(e.perm)}
		return dp.Upload(ctx, meta, progress.Reader(f), e.size)
	})
	progress.Done()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for i, rel := range notDone {
		notDone[i] = remoteJoin(target, rel)
	}
	return &failedError{where: "in the sandbox", failed: notDone, first: err}
}

// uploadTar unpacks a tar stream from standard input into a directory of
// the sandbox, file by file as it arrives. Entries that would land outside
// it are refused; links are made, and directories get their modes, at the
// end.
func uploadTar(ctx context.Context, opts *options) error {
	dp, err := connect(ctx, opts)
	if err != nil {
		return err
	}
	target := strings.TrimSuffix(opts.Dst.Path, "/")
	if target == "" {
		target = "/"
	}
	if err := dp.CreateDirectories(ctx, map[string]client.Permission{target: {Mode: 755}}); err != nil {
		return fmt.Errorf("cannot create %s: %w", target, err)
	}
	in := &trailerReader{r: bufio.NewReaderSize(opts.IOStreams.In, 256<<10)}
	tr := tar.NewReader(in)
	s := summary{Source: "-", Destination: opts.Dst.Sandbox.ID + ":" + target}
	dirs := map[string]client.Permission{}
	links := map[string]string{}
	var fileTimes, dirTimes []stamp
	var failed []string
	var first error
	fail := func(name string, err error) {
		failed = append(failed, name)
		if first == nil {
			first = err
		}
	}
	progress := transfer.NewProgress(opts.IOStreams, opts.Format, "Copying from standard input", -1)
	defer progress.Done()
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) && !in.ended() {
			err = in.cutShort()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			progress.Done()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("cannot read the tar stream: %w", err)
		}
		rel, err := cleanRel(hdr.Name)
		if err != nil {
			if hdr.Name != "./" && hdr.Name != "." {
				fail(hdr.Name, err)
			}
			continue
		}
		p := remoteJoin(target, rel)
		switch hdr.Typeflag {
		case tar.TypeDir:
			dirs[p] = client.Permission{Mode: octalDigits(uint32(hdr.Mode))}
			dirTimes = append(dirTimes, stamp{p, hdr.ModTime})
			s.Directories++
		case tar.TypeReg:
			meta := client.FileMetadata{Path: p, Mode: octalDigits(uint32(hdr.Mode))}
			if err := dp.Upload(ctx, meta, progress.Reader(tr), hdr.Size); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				fail(p, err)
				continue
			}
			fileTimes = append(fileTimes, stamp{p, hdr.ModTime})
			s.Files++
			s.Bytes += hdr.Size
		case tar.TypeSymlink:
			links[p] = hdr.Linkname
			s.Symlinks++
		default:
			fail(p, fmt.Errorf("%s: tar entries of type %q are not copied", hdr.Name, hdr.Typeflag))
		}
	}
	progress.Done()
	if len(dirs) > 0 {
		if err := dp.CreateDirectories(ctx, dirs); err != nil {
			return fmt.Errorf("cannot create the directories under %s: %w", target, err)
		}
		if err := dp.SetPermissions(ctx, dirs); err != nil {
			return fmt.Errorf("cannot set the directories' modes: %w", err)
		}
	}
	if err := makeLinks(ctx, dp, links); err != nil {
		return err
	}
	// A directory's time after what went into it, deepest first.
	sort.SliceStable(dirTimes, func(i, j int) bool {
		return strings.Count(dirTimes[i].path, "/") > strings.Count(dirTimes[j].path, "/")
	})
	if err := stampRemote(ctx, dp, append(fileTimes, dirTimes...)); err != nil {
		return err
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return &failedError{where: "in the sandbox", failed: failed, first: first}
	}
	return s.print(opts)
}
