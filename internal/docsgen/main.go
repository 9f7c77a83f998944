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
	manDirFlag  = flag.String("man-dir", "", "write the man pages here instead of DIR/man (release archives)")
	versionFlag = flag.String("version", "", "release version for the man pages' header")
	dateFlag    = flag.String("date", "", "release date for the man pages' header (RFC 3339 or YYYY-MM-DD)")
)

func main() {
	flag.Parse()
	stamp, err := ParseManStamp(*versionFlag, *dateFlag)
	if err == nil {
		err = run(*dirFlag, *manDirFlag, *manOnlyFlag, stamp)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docsgen:", err)
		os.Exit(1)
	}
}

func run(dir, manDir string, manOnly bool, stamp ManStamp) error {
	pages, err := Generate(NewTree(), dir, stamp)
	if err != nil {
		return err
	}
	for sub, files := range pages {
		if manOnly && sub != "man" {
			continue
		}
		out := dir + "/" + sub
		if sub == "man" && manDir != "" {
			out = manDir
		}
		if err := writeDir(out, files); err != nil {
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
