package ops

import (
	"os/exec"
	"strings"
	"testing"
)

// The markers come out of the output whatever the chunks it arrives in,
// and output that only begins like a marker is kept whole.
func TestEndMarkersInAnyChunks(t *testing.T) {
	m0 := newEndMarkers("n1")
	tag := string(m0.tag)
	out := "out\x00osb-end-n\x00osb-end-n1\x00osb-end-n1" // ends like the start of the tag
	errText := "err\x00"
	for size := 1; size <= len(tag)+len(out); size++ {
		m := newEndMarkers("n1")
		var gotOut, gotErr strings.Builder
		feed := func(stderr bool, s string) {
			for len(s) > 0 {
				n := min(size, len(s))
				b := m.filter(stderr, []byte(s[:n]))
				if stderr {
					gotErr.Write(b)
				} else {
					gotOut.Write(b)
				}
				s = s[n:]
			}
		}
		feed(false, out+tag)
		if m.done() {
			t.Fatalf("chunks of %d: done before the stderr marker", size)
		}
		feed(true, errText+tag+"42\n")
		if !m.done() || m.code != 42 || gotOut.String() != out || gotErr.String() != errText {
			t.Errorf("chunks of %d: done %v code %d, stdout %q, stderr %q", size, m.done(), m.code, gotOut.String(), gotErr.String())
		}
	}
}

// ops sits below the front doors and mcp is one of them: neither may
// depend on cobra or on cmdutil, the command line's cobra toolkit.
func TestNoCobra(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the dependencies")
	}
	for _, pkg := range []string{".", "../mcp"} {
		out, err := exec.Command(gobin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/spf13/") || strings.HasSuffix(dep, "/internal/cmdutil") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
