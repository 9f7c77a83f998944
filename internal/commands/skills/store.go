package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Statuses reported per skill and target.
const (
	statusInstalled      = "installed"
	statusAlreadyPresent = "already_present"
	statusUpdated        = "updated"
	statusRemoved        = "removed"
	statusNotInstalled   = "not_installed"
	// The skill was in a layout an earlier osb wrote, and moved to the
	// tool's current one.
	statusUpgraded = "upgraded"
)

// install puts s into place for t and reports what changed, then removes
// what an earlier osb wrote for t in an older layout.
// A broken old file is reported before anything is written.
func install(p place, t target, s skill) (string, error) {
	var olds []target
	for _, l := range t.Legacy {
		old, err := holds(p, l, s)
		if err != nil {
			return "", err
		}
		if old {
			olds = append(olds, l)
		}
	}
	status, err := write(p, t, s)
	if err != nil {
		return "", err
	}
	for _, l := range olds {
		if _, err := remove(p, l, s); err != nil {
			return "", err
		}
		status = statusUpgraded
	}
	return status, nil
}

// write puts s into place for t. A file that already holds exactly the
// right text is left alone.
func write(p place, t target, s skill) (string, error) {
	path := p.file(t, s)
	old, exists, err := readText(path)
	if err != nil {
		return "", err
	}
	content := s.render(t.Form)
	status := statusInstalled
	if t.Shared {
		content, status, err = withBlock(old, s, content)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	} else if exists {
		status = statusUpdated
		if old == content {
			status = statusAlreadyPresent
		}
	}
	if status == statusAlreadyPresent {
		return status, nil
	}
	return status, writeAtomic(path, content)
}

// uninstall removes what install wrote for s and t, in the current layout
// and any earlier one, and nothing else.
func uninstall(p place, t target, s skill) (string, error) {
	status, err := remove(p, t, s)
	for _, l := range t.Legacy {
		if err != nil {
			break
		}
		if old, herr := holds(p, l, s); !old || herr != nil {
			err = herr
			continue
		}
		var st string
		if st, err = remove(p, l, s); st == statusRemoved {
			status = st
		}
	}
	return status, err
}

// remove deletes s's file for t: in a shared file only the marked block
// goes, the user's text stays as it was.
func remove(p place, t target, s skill) (string, error) {
	path := p.file(t, s)
	old, exists, err := readText(path)
	if err != nil || !exists {
		return statusNotInstalled, err
	}
	rest := ""
	if t.Shared {
		var found bool
		rest, found, err = withoutBlock(old, s)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		if !found {
			return statusNotInstalled, nil
		}
	}
	if strings.TrimSpace(rest) != "" {
		return statusRemoved, writeAtomic(path, rest)
	}
	if err := os.Remove(path); err != nil {
		return "", err
	}
	removeEmptyDirs(p.Root, filepath.Dir(path))
	return statusRemoved, nil
}

// installed reports whether s is in place for t: the file exists, and for a
// shared file it holds the skill's complete block.
func installed(p place, t target, s skill) bool {
	ok, err := holds(p, t, s)
	return ok && err == nil
}

// holds is installed with the reason it cannot tell: a shared file whose
// block has no end, which must be fixed by hand before osb changes it. A
// directory where a shared file was (a tool that moved to a directory of
// rules) holds nothing of osb's.
func holds(p place, t target, s skill) (bool, error) {
	path := p.file(t, s)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return false, nil
	}
	text, exists, err := readText(path)
	if err != nil || !exists {
		return false, err
	}
	if !t.Shared {
		return true, nil
	}
	_, _, found, err := findBlock(text, s)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return found, nil
}

// block is the marked block holding content in a shared file.
func block(s skill, content string) string {
	return s.beginMarker() + "\n" + strings.TrimSpace(content) + "\n" + s.endMarker() + "\n"
}

// withBlock returns text with s's block set to content: replaced where it is,
// or appended after one blank line, so the text around it keeps every byte.
func withBlock(text string, s skill, content string) (string, string, error) {
	want := block(s, content)
	start, end, found, err := findBlock(text, s)
	switch {
	case err != nil:
		return "", "", err
	case found && text[start:end] == want:
		return text, statusAlreadyPresent, nil
	case found:
		return text[:start] + want + text[end:], statusUpdated, nil
	}
	sep := ""
	switch {
	case text == "":
	case strings.HasSuffix(text, "\n"):
		sep = "\n"
	default:
		sep = "\n\n"
	}
	return text + sep + want, statusInstalled, nil
}

// withoutBlock removes s's block and the blank line withBlock put before it
// (or after it, when the block opens the file).
func withoutBlock(text string, s skill) (string, bool, error) {
	start, end, found, err := findBlock(text, s)
	if !found || err != nil {
		return text, false, err
	}
	switch {
	case start >= 2 && text[start-2:start] == "\n\n":
		start--
	case start == 0 && strings.HasPrefix(text[end:], "\n"):
		end++
	}
	return text[:start] + text[end:], true, nil
}

// findBlock locates s's block: from its BEGIN line through its END line and
// that line's newline. Markers count only as whole lines.
func findBlock(text string, s skill) (start, end int, found bool, err error) {
	start = lineIndex(text, s.beginMarker(), 0)
	if start < 0 {
		return 0, 0, false, nil
	}
	endLine := lineIndex(text, s.endMarker(), start)
	if endLine < 0 {
		return 0, 0, false, fmt.Errorf("the line %q has no matching %q; fix the file by hand", s.beginMarker(), s.endMarker())
	}
	end = endLine + len(s.endMarker())
	if strings.HasPrefix(text[end:], "\r\n") {
		end += 2
	} else if strings.HasPrefix(text[end:], "\n") {
		end++
	}
	return start, end, true, nil
}

// lineIndex finds line as a whole line of text at or after from, or -1.
func lineIndex(text, line string, from int) int {
	for i := from; i <= len(text); {
		j := strings.Index(text[i:], line)
		if j < 0 {
			return -1
		}
		at := i + j
		after := text[at+len(line):]
		if (at == 0 || text[at-1] == '\n') &&
			(after == "" || strings.HasPrefix(after, "\n") || strings.HasPrefix(after, "\r\n")) {
			return at
		}
		i = at + 1
	}
	return -1
}

// readText reads a file; a missing file is not an error.
func readText(path string) (text string, exists bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// writeAtomic replaces path with data through a temporary file in the same
// directory, so a crash leaves the old file or the new one, never half of
// one. New files get 0644, existing ones keep their mode; a symlink is
// followed so the file it points to is the one updated.
func writeAtomic(path, data string) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, ".osb-skill-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// removeEmptyDirs removes dir and its parents while they are empty, never
// root itself or anything outside it. Directories that still hold
// anything, the user's or another skill's, stay.
func removeEmptyDirs(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}
