package file_test

import (
	"crypto/sha256"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/server/servertest"
	"github.com/osb-dev/osb/internal/transfer"
	"github.com/osb-dev/osb/internal/umask"
)

// TestMain also lets a test run this binary as osb itself (OSB_TEST_AS_OSB=1),
// for the cases that need a real process: stdout that is a pipe or a file.
func TestMain(m *testing.M) {
	if os.Getenv("OSB_TEST_AS_OSB") == "1" {
		os.Exit(commands.Main())
	}
	// New local files are checked for the default mode of new files.
	umask.Set(0o022)
	cmdtest.DefaultChildSignals() // a test sends Ctrl-C to an osb it runs
	os.Exit(m.Run())
}

// newSandbox starts a local server with one sandbox and returns the sandbox id.
func newSandbox(t *testing.T) (*cmdtest.Env, string) {
	t.Helper()
	env := cmdtest.New(t, servertest.NoIsolation)
	return env, env.NewSandbox()
}

// ownerRE matches the local user and group names, which differ between machines.
var ownerRE = func() *regexp.Regexp {
	var names []string
	if u, err := user.Current(); err == nil {
		names = append(names, regexp.QuoteMeta(u.Username))
		if g, err := user.LookupGroupId(u.Gid); err == nil {
			names = append(names, regexp.QuoteMeta(g.Name))
		}
	}
	if len(names) == 0 {
		return regexp.MustCompile(`$.^`) // matches nothing
	}
	return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
}()

// cellGap is the space between table cells (not indentation).
var cellGap = regexp.MustCompile(`(\S)  +`)

// norm makes output comparable across runs and machines: the sandbox id,
// times and owner names are replaced by labels. Table columns are as wide
// as those values, so the gaps between cells are evened out too.
func norm(s, id string) string {
	s = ownerRE.ReplaceAllString(cmdtest.Normalize(s, map[string]string{id: "<ID>"}), "<OWNER>")
	return cellGap.ReplaceAllString(s, "$1  ")
}

// localFile writes content to a fresh temp dir and returns its path.
func localFile(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func readLocal(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noStaging fails if a download left a staging directory in dir.
func noStaging(t *testing.T, dir string) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(dir, transfer.StagePrefix+"*")); len(m) != 0 {
		t.Errorf("staging left behind: %v", m)
	}
}

// remoteExists asks the server, through osb, whether a sandbox path exists.
func remoteExists(t *testing.T, env *cmdtest.Env, id, p string) bool {
	t.Helper()
	r := env.Run("file", "info", id, p, "-o", "json")
	switch r.Code {
	case 0:
		return true
	case 4:
		return false
	}
	t.Fatalf("file info %s: exit %d: %s", p, r.Code, r.Stderr)
	return false
}

func sha(t *testing.T, p string) [32]byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}
