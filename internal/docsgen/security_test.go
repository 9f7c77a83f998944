package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every promise docs/security.md lists names the tests that check it, and
// those tests exist: a renamed or deleted test cannot leave a promise
// that nothing checks.
func TestSecurityPromisesNameRealTests(t *testing.T) {
	b, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## Promises and the tests that check them")
	if !ok {
		t.Fatal("docs/security.md has no section of promises and their tests")
	}
	tests := testFuncs(t, "../..")
	name := regexp.MustCompile("`([a-z0-9]+)\\.(Test[A-Za-z0-9_]+)`")
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Promise |") {
			continue
		}
		rows++
		cells := strings.Split(line, "|")
		named := name.FindAllStringSubmatch(cells[len(cells)-2], -1)
		if len(named) == 0 {
			t.Errorf("no test named for: %s", line)
		}
		for _, m := range named {
			if !tests[m[1]+"."+m[2]] {
				t.Errorf("%s.%s, named for %q, is no test function of a package %s", m[1], m[2], strings.TrimSpace(cells[1]), m[1])
			}
		}
	}
	if rows < 10 {
		t.Fatalf("only %d promises found in docs/security.md", rows)
	}
}

// testFuncs is every Test function of the module's _test.go files, as
// "package.TestName" (an external test package counts as its package).
func testFuncs(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := strings.TrimSuffix(f.Name.Name, "_test")
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				out[pkg+"."+fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
