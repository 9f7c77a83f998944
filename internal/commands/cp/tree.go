package cp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// entry is one thing in a tree being copied.
type entry struct {
	rel  string // slash-separated, relative to the tree's root
	kind kind
	perm uint32
	size int64
	link string // a symlink's target
	mod  time.Time
}

type kind int

const (
	kindFile kind = iota
	kindDir
	kindLink
)

// tree is what a copy moves: its entries in walk order (a directory before
// what it holds) and the bytes of its files.
type tree struct {
	// root is the directory itself, when the copy makes it; nil when the
	// copy goes into a directory that is there (DIR/.), whose own mode
	// and time stay as they are.
	root    *entry
	entries []entry
	bytes   int64
	files   int
	dirs    int
	links   int
}

func (t *tree) add(e entry) {
	t.entries = append(t.entries, e)
	switch e.kind {
	case kindFile:
		t.files++
		t.bytes += e.size
	case kindDir:
		t.dirs++
	case kindLink:
		t.links++
	}
}

// stamps are the modification times of the tree copied to target: files,
// then directories after everything in them (walk order reversed), the
// tree's own directory last when the copy made it. Links keep the time
// they are made at.
func (t *tree) stamps(target string) []stamp {
	var files, dirs []stamp
	for _, e := range t.entries {
		switch e.kind {
		case kindFile:
			files = append(files, stamp{remoteJoin(target, e.rel), e.mod})
		case kindDir:
			dirs = append(dirs, stamp{remoteJoin(target, e.rel), e.mod})
		}
	}
	slices.Reverse(dirs)
	stamps := append(files, dirs...)
	if t.root != nil {
		stamps = append(stamps, stamp{target, t.root.mod})
	}
	return stamps
}

// of is the entries of one kind.
func (t *tree) of(k kind) []entry {
	var out []entry
	for _, e := range t.entries {
		if e.kind == k {
			out = append(out, e)
		}
	}
	return out
}

// walkLocal lists a local directory tree without following symlinks.
// Sockets, pipes and devices are left out: there is nothing to copy.
func walkLocal(root string) (*tree, error) {
	t := &tree{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{rel: filepath.ToSlash(rel), perm: uint32(fi.Mode().Perm()), mod: fi.ModTime()}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			e.kind = kindLink
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		case fi.IsDir():
			e.kind = kindDir
		case fi.Mode().IsRegular():
			e.kind, e.size = kindFile, fi.Size()
		default:
			return nil
		}
		t.add(e)
		return nil
	})
	return t, err
}

// cleanRel checks a path inside a tree: relative, and never climbing out
// of it. It returns the path cleaned, slash-separated.
func cleanRel(name string) (string, error) {
	c := path.Clean(strings.ReplaceAll(name, `\`, "/"))
	if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") || c == "." {
		return "", fmt.Errorf("%q would land outside the destination", name)
	}
	return c, nil
}

// localPath is where rel goes under root. Every directory on the way must
// already be a real directory: a symlink there (one in the tree, or one an
// attacker put in the stream) is never followed.
func localPath(root, rel string) (string, error) {
	parts := strings.Split(rel, "/")
	p := root
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s is not a directory; a symlink is never followed", p)
		}
	}
	return filepath.Join(p, parts[len(parts)-1]), nil
}

// pool runs work on each entry, jobs at a time, and stops handing out
// entries after the first failure (or when ctx ends). It returns the
// entries not done, in order, and the first error.
func pool(ctx context.Context, jobs int, entries []entry, work func(context.Context, entry) error) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu     sync.Mutex
		first  error
		failed = map[int]bool{}
	)
	next := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := work(ctx, entries[i]); err != nil {
					mu.Lock()
					failed[i] = true
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
	sent := 0
	for ; sent < len(entries); sent++ {
		select {
		case next <- sent:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(next)
	wg.Wait()
	var notDone []string
	for i := range entries {
		if failed[i] || i >= sent {
			notDone = append(notDone, entries[i].rel)
		}
	}
	if first == nil && len(notDone) > 0 {
		first = ctx.Err()
	}
	return notDone, first
}

// runScript runs shell text in the sandbox and returns its output lines.
// A non-zero exit is an error carrying the output.
func runScript(ctx context.Context, dp *client.DataPlane, script string) ([]string, error) {
	var out scriptLines
	run := ops.CommandRun{Output: &out, Whole: true,
		Open: func(ctx context.Context) (*client.EventStream, error) {
			return dp.RunCommand(ctx, &client.RunCommandRequest{Command: script})
		}}
	end, err := run.Run(ctx)
	if errors.Is(err, io.EOF) {
		return nil, errors.New("the server closed the stream before the command finished")
	}
	if err != nil {
		return nil, err
	}
	if code, ok := end.Last.ExitCode(); !ok || code != 0 {
		return out.lines, fmt.Errorf("the command in the sandbox failed (%s): %s", end.Last.Type, strings.Join(out.lines, "; "))
	}
	return out.lines, nil
}

// scriptLines keeps a script's output lines, each without its newline.
type scriptLines struct {
	ops.Unbuffered
	lines []string
}

func (s *scriptLines) Write(ev *client.Event) {
	line := string(ev.Data)
	if line == "\n" {
		line = ""
	}
	s.lines = append(s.lines, strings.TrimSuffix(line, "\n"))
}

// readLinks reads the targets of remote symlinks, one command for all.
func readLinks(ctx context.Context, dp *client.DataPlane, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString("for p in")
	for _, p := range paths {
		b.WriteString(" " + shellQuote(p))
	}
	b.WriteString("; do t=$(readlink -- \"$p\") || t=; printf 'L:%s\\n' \"$t\"; done")
	lines, err := runScript(ctx, dp, b.String())
	if err != nil {
		return nil, fmt.Errorf("cannot read the symlinks' targets: %w", err)
	}
	var targets []string
	for _, l := range lines {
		if t, ok := strings.CutPrefix(l, "L:"); ok {
			targets = append(targets, t)
		}
	}
	if len(targets) != len(paths) {
		return nil, fmt.Errorf("cannot read the symlinks' targets: %d answers for %d links (a target with a newline?)", len(targets), len(paths))
	}
	return targets, nil
}

// makeLinks creates remote symlinks, replacing what is there, in one command.
func makeLinks(ctx context.Context, dp *client.DataPlane, links map[string]string) error {
	if len(links) == 0 {
		return nil
	}
	var b strings.Builder
	for p, target := range links {
		b.WriteString("ln -sfn -- " + shellQuote(target) + " " + shellQuote(p) + " || exit 1\n")
	}
	if _, err := runScript(ctx, dp, b.String()); err != nil {
		return fmt.Errorf("cannot create the symlinks: %w", err)
	}
	return nil
}
