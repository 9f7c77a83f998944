package transfer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// treeEntry is the name a staged tree has inside its staging directory.
const treeEntry = "tree"

// TreeStage builds a directory tree that does not exist yet out of sight,
// in a staging directory beside it, and then puts it in place in one
// rename: each file is written where it belongs in the tree, with no stage
// of its own, and one cut off is removed, so the tree never holds a partial
// file. A copy killed before Close leaves only the hidden staging
// directory, which removeStale clears.
type TreeStage struct {
	dir    string // the staging directory
	root   string // the tree inside it
	target string
}

// NewTreeStage stages the new tree target; its parent must exist.
func NewTreeStage(target string) (*TreeStage, error) {
	parent := filepath.Dir(target)
	removeStale(parent)
	dir, err := os.MkdirTemp(parent, stageName())
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, treeEntry)
	if err := os.Mkdir(root, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &TreeStage{dir: dir, root: root, target: target}, nil
}

// Root is where the tree is built.
func (t *TreeStage) Root() string { return t.root }

// Open makes the file at path, under Root: written whole or not at all
// (Abort removes it). A name that is there already (an archive may carry
// one twice) is replaced.
func (t *TreeStage) Open(path string) (*Destination, error) {
	f, err := createNew(path)
	if errors.Is(err, fs.ErrExist) {
		if err = os.Remove(path); err == nil {
			f, err = createNew(path)
		}
	}
	if err != nil {
		return nil, err
	}
	return &Destination{w: f, file: f, placed: path}, nil
}

// Close puts the tree at its target and removes the staging directory;
// a tree that cannot take its place (something is there now) is removed
// with it, not merged.
func (t *TreeStage) Close() error {
	if err := rename(t.root, t.target); err != nil {
		os.RemoveAll(t.dir)
		return fmt.Errorf("%s appeared while the copy was made: %w", t.target, err)
	}
	return os.RemoveAll(t.dir)
}
