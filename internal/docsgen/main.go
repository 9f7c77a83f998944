// Command docsgen writes the command reference from the command tree: one
// Markdown page per command into docs/cli and one man page per command into
// docs/man. Both directories are wholly generated; run it from the module
// root after changing any command:
//
//	go run ./internal/docsgen
//
// A test regenerates into a temporary directory and fails when the
// committed files differ.
package main

import (
	"flag"
	"fmt"
	"os"
)

// Flags live at package level so the release test can check that the
// goreleaser hook passes only flags that exist.
var (
	dirFlag     = flag.String("dir", "docs", "docs directory; pages go to DIR/cli and DIR/man")
	manOnlyFlag = flag.Bool("man-only", false, "write only the man pages (for release archives)")
)

func main() {
	flag.Parse()
	if err := run(*dirFlag, *manOnlyFlag); err != nil {
		fmt.Fprintln(os.Stderr, "docsgen:", err)
		os.Exit(1)
	}
}

func run(dir string, manOnly bool) error {
	pages, err := Generate(NewTree(), dir)
	if err != nil {
		return err
	}
	for sub, files := range pages {
		if manOnly && sub != "man" {
			continue
		}
		if err := writeDir(dir+"/"+sub, files); err != nil {
			return err
		}
	}
	return nil
}

// writeDir makes dir hold exactly files: stale pages of removed commands go.
func writeDir(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(dir+"/"+name, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
