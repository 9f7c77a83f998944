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
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/transfer"
)

// listDepth is deep enough for any real tree; execd needs a number.
const listDepth = 4096

// describeSource connects to the source sandbox and describes the path to copy.
func describeSource(ctx context.Context, opts *options) (*client.DataPlane, client.FileInfo, error) {
	dp, err := connect(ctx, opts)
	if err != nil {
		return nil, client.FileInfo{}, err
	}
	infos, err := dp.FileInfo(ctx, []string{opts.Src.Path})
	if err != nil {
		return nil, client.FileInfo{}, err
	}
	return dp, infos[opts.Src.Path], nil
}

// download copies a file or tree of the sandbox to this machine.
func download(ctx context.Context, opts *options) error {
	dp, info, err := describeSource(ctx, opts)
	if err != nil {
		return err
	}
	switch info.Type {
	case "file":
		return downloadOne(ctx, opts, dp, info)
	case "directory":
		return downloadTree(ctx, opts, dp, info)
	case "symlink":
		return downloadLink(ctx, opts, dp, info)
	}
	return ops.UsageErrorf("%s is a %s in the sandbox; only files, directories and symlinks are copied", opts.Src.Path, info.Type)
}

// localTarget is where a copy of the remote name goes: inside local when it
// is an existing directory, else local itself.
func localTarget(local, name string, isDir bool) (string, error) {
	fi, err := os.Stat(local)
	switch {
	case err == nil && fi.IsDir():
		return filepath.Join(local, name), nil
	case err == nil && isDir:
		return "", ops.UsageErrorf("cannot copy a directory onto '%s': it is not a directory", local)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", ops.UsageErrorf("cannot write to '%s': %v", local, errors.Unwrap(err))
	case err != nil && !isDir && strings.HasSuffix(local, string(filepath.Separator)):
		return "", ops.UsageErrorf("'%s': no such directory", local)
	}
	return strings.TrimSuffix(local, string(filepath.Separator)), nil
}

// treeName is the name a copy of the remote directory takes: its own, or
// "." for DIR/. (as cp -a and docker cp read it), whose contents go
// straight into the destination. The server may have cleaned the path it
// describes, so the name is read from what was asked.
func treeName(asked, described string) string {
	if asked == "." || strings.HasSuffix(asked, "/.") {
		return "."
	}
	return path.Base(described)
}

// downloadOne copies one file: staged beside its destination and renamed
// into place once complete, with the remote permission bits.
func downloadOne(ctx context.Context, opts *options, dp *client.DataPlane, info client.FileInfo) error {
	local, err := localTarget(opts.Dst.Path, path.Base(info.Path), false)
	if err != nil {
		return err
	}
	progress := transfer.NewProgress(opts.IOStreams, opts.Format, "Copying "+path.Base(info.Path), info.Size)
	n, err := fetch(ctx, dp, info.Path, local, permOf(info.Mode), progress, nil)
	progress.Done()
	if err == nil {
		err = stampLocal(local, info.ModifiedAt.T)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &failedError{where: "here", failed: []string{local}, first: err}
	}
	return summary{Source: opts.Src.Raw, Destination: local, Files: 1, Bytes: n}.print(opts)
}

// fetch downloads remote into the local file path, replacing it only once
// the whole file arrived; staged in stage, or beside it when stage is nil.
func fetch(ctx context.Context, dp *client.DataPlane, remote, local string, perm uint32, progress *transfer.Progress, stage *transfer.Stage) (int64, error) {
	if fi, err := os.Lstat(local); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// A link in the way is replaced, never written through.
		if err := os.Remove(local); err != nil {
			return 0, err
		}
	}
	var dest *transfer.Destination
	var err error
	if stage != nil {
		dest, err = stage.Open(local)
	} else {
		dest, err = transfer.Open(local, nil)
	}
	if err != nil {
		return 0, err
	}
	defer dest.Abort()
	dest.SetMode(fs.FileMode(perm))
	dl, err := dp.Download(ctx, remote)
	if err != nil {
		return 0, err
	}
	defer dl.Body.Close()
	n, err := transfer.Copy(dest, progress.Reader(dl.Body), dl.Size)
	if err != nil {
		return n, err
	}
	return n, dest.Commit()
}

// listRemote lists a remote directory as a tree relative to it, with the
// targets of its symlinks.
func listRemote(ctx context.Context, dp *client.DataPlane, root string) (*tree, error) {
	infos, err := dp.ListDirectory(ctx, root, listDepth)
	if err != nil {
		return nil, err
	}
	t := &tree{}
	var linkPaths []string
	prefix := strings.TrimSuffix(root, "/") + "/"
	for _, fi := range infos {
		rel, err := cleanRel(strings.TrimPrefix(fi.Path, prefix))
		if err != nil || !strings.HasPrefix(fi.Path, prefix) {
			return nil, fmt.Errorf("the server listed %s, which is not under %s", fi.Path, root)
		}
		e := entry{rel: rel, perm: permOf(fi.Mode), size: fi.Size, mod: fi.ModifiedAt.T}
		switch fi.Type {
		case "file":
			e.kind = kindFile
		case "directory":
			e.kind = kindDir
		case "symlink":
			e.kind = kindLink
			linkPaths = append(linkPaths, fi.Path)
		default:
			continue
		}
		t.add(e)
	}
	targets, err := readLinks(ctx, dp, linkPaths)
	if err != nil {
		return nil, err
	}
	i := 0
	for k := range t.entries {
		if t.entries[k].kind == kindLink {
			t.entries[k].link = targets[i]
			i++
		}
	}
	return t, nil
}

// downloadTree copies a remote directory: directories first, then files,
// jobs at a time, then symlinks, and directory modes last.
func downloadTree(ctx context.Context, opts *options, dp *client.DataPlane, info client.FileInfo) error {
	root, err := localTarget(opts.Dst.Path, treeName(opts.Src.Path, info.Path), true)
	if err != nil {
		return err
	}
	if opts.Via != viaFiles {
		t, err := downloadViaTar(ctx, opts, dp, info.Path, root)
		if err == nil {
			return summary{Source: opts.Src.Raw, Destination: root, Files: t.files, Directories: t.dirs + 1, Symlinks: t.links, Bytes: t.bytes}.print(opts)
		}
		if !errors.Is(err, errNoTarPath) || opts.Via == viaTar {
			return err
		}
	}
	t, err := listRemote(ctx, dp, info.Path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	dirs := append([]entry{{rel: ".", kind: kindDir, perm: permOf(info.Mode), mod: info.ModifiedAt.T}}, t.of(kindDir)...)
	for _, e := range dirs[1:] {
		p, err := localPath(root, e.rel)
		if err != nil {
			return err
		}
		if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	files := t.of(kindFile)
	stage, err := transfer.NewStage(root)
	if err != nil {
		return err
	}
	progress := transfer.NewProgress(opts.IOStreams, opts.Format, "Copying "+plural(len(files), "file"), t.bytes)
	notDone, err := pool(ctx, opts.Jobs, files, func(ctx context.Context, e entry) error {
		p, err := localPath(root, e.rel)
		if err != nil {
			return err
		}
		if _, err = fetch(ctx, dp, remoteJoin(info.Path, e.rel), p, e.perm, progress, stage); err != nil {
			return err
		}
		return stampLocal(p, e.mod)
	})
	progress.Done()
	// Gone before the directory modes and times are set (see closeStage).
	stage.Close()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for i, rel := range notDone {
			notDone[i] = filepath.Join(root, filepath.FromSlash(rel))
		}
		return &failedError{where: "here", failed: notDone, first: err}
	}
	for _, e := range t.of(kindLink) {
		if err := placeLink(root, e); err != nil {
			return err
		}
	}
	// Deepest first, so a read-only directory is closed after its children.
	slices.Reverse(dirs)
	for _, e := range dirs {
		p := root
		if e.rel != "." {
			p = filepath.Join(root, filepath.FromSlash(e.rel))
		}
		if err := os.Chmod(p, fs.FileMode(e.perm)); err != nil {
			return err
		}
		if err := stampLocal(p, e.mod); err != nil {
			return err
		}
	}
	return summary{Source: opts.Src.Raw, Destination: root, Files: t.files, Directories: t.dirs + 1, Symlinks: t.links, Bytes: t.bytes}.print(opts)
}

// placeLink makes a symlink of the tree, replacing a file or link there
// (never a directory).
func placeLink(root string, e entry) error {
	p, err := localPath(root, e.rel)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return os.Symlink(filepath.FromSlash(e.link), p)
}

// downloadLink copies a remote symlink as a link.
func downloadLink(ctx context.Context, opts *options, dp *client.DataPlane, info client.FileInfo) error {
	local, err := localTarget(opts.Dst.Path, path.Base(info.Path), false)
	if err != nil {
		return err
	}
	targets, err := readLinks(ctx, dp, []string{info.Path})
	if err != nil {
		return err
	}
	if err := placeLink(filepath.Dir(local), entry{rel: filepath.Base(local), link: targets[0]}); err != nil {
		return err
	}
	return summary{Source: opts.Src.Raw, Destination: local, Symlinks: 1}.print(opts)
}

// downloadTar writes a remote file or tree to standard output as a tar
// stream, one file after the other as it downloads, named as tar -C
// PARENT NAME would name them.
func downloadTar(ctx context.Context, opts *options) error {
	dp, info, err := describeSource(ctx, opts)
	if err != nil {
		return err
	}
	src := opts.Src.Path
	base := treeName(src, info.Path)
	t := &tree{}
	switch info.Type {
	case "directory":
		if t, err = listRemote(ctx, dp, info.Path); err != nil {
			return err
		}
	case "file", "symlink":
	default:
		return ops.UsageErrorf("%s is a %s in the sandbox; only files, directories and symlinks are copied", src, info.Type)
	}
	root := entry{rel: ".", perm: permOf(info.Mode), size: info.Size, mod: info.ModifiedAt.T}
	switch info.Type {
	case "file":
		root.kind = kindFile
		t.add(root)
	case "directory":
		root.kind = kindDir
		t.entries = append([]entry{root}, t.entries...)
	case "symlink":
		root.kind = kindLink
		targets, err := readLinks(ctx, dp, []string{info.Path})
		if err != nil {
			return err
		}
		root.link = targets[0]
		t.add(root)
	}
	out := bufio.NewWriterSize(opts.IOStreams.Out, 256<<10)
	tw := tar.NewWriter(out)
	progress := transfer.NewProgress(opts.IOStreams, opts.Format, "Copying "+plural(t.files, "file"), t.bytes)
	defer progress.Done()
	for _, e := range t.entries {
		name, remote := path.Join(base, e.rel), path.Join(info.Path, e.rel)
		hdr := &tar.Header{Name: name, Mode: int64(e.perm), ModTime: e.mod, Format: tar.FormatPAX}
		switch e.kind {
		case kindDir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		case kindLink:
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.link
		case kindFile:
			hdr.Typeflag, hdr.Size = tar.TypeReg, e.size
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if e.kind == kindFile {
			if err := streamFile(ctx, dp, remote, tw, e.size, progress); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("the tar stream is cut short at %s: %w", remote, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return out.Flush()
}

// streamFile writes exactly size bytes of a remote file into w.
func streamFile(ctx context.Context, dp *client.DataPlane, remote string, w io.Writer, size int64, progress *transfer.Progress) error {
	dl, err := dp.Download(ctx, remote)
	if err != nil {
		return err
	}
	defer dl.Body.Close()
	_, err = transfer.Copy(w, progress.Reader(io.LimitReader(dl.Body, size+1)), size)
	return err
}
