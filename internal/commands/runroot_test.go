package commands

import (
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/iostreams"
)

// Every group under osb is in groups, by its own name: a group left
// out would still run (in the whole tree), but a name that is wrong would
// build the wrong group.
func TestGroupsNameEveryGroup(t *testing.T) {
	f := cmdutil.New(testStreams(), func(string) string { return "" })
	listed := map[string]bool{}
	for name, build := range groups {
		if got := build(f).Name(); got != name {
			t.Errorf("groups lists %q for the group named %q", name, got)
		}
		listed[name] = true
	}
	others := map[string]bool{"completion": true, "version": true, "help": true, "exit-codes": true, "environment": true, "formatting": true}
	for _, c := range NewCmdRoot(f).Commands() {
		if !listed[c.Name()] && !others[c.Name()] {
			t.Errorf("group %q is not in groups", c.Name())
		}
	}
}

// A command line that starts with a group runs in a tree of that group
// alone; what it prints and its exit code are those of the whole tree:
// every command's --help, a flag that names nothing, and a word under a
// group that names no command.
func TestGroupAloneRunsAsInTheWholeTree(t *testing.T) {
	f := cmdutil.New(testStreams(), func(string) string { return "" })
	var lines [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		path = append(path[:len(path):len(path)], c.Name())
		lines = append(lines,
			append(path[:len(path):len(path)], "--help"),
			append(path[:len(path):len(path)], "--no-such-flag"))
		if c.HasSubCommands() {
			lines = append(lines, append(path[:len(path):len(path)], "no-such-word"))
		}
		for _, sub := range c.Commands() {
			walk(sub, path)
		}
	}
	for _, build := range groups {
		walk(build(f), nil)
	}
	// The root's own flags before the group, in each form they take.
	lines = append(lines,
		[]string{"--domain", "127.0.0.1:1", "sandbox", "list", "--help"},
		[]string{"--domain=127.0.0.1:1", "-v", "--no-color", "sandbox", "lsit"},
		[]string{"--request-timeout", "5", "--protocol=https", "sandbox", "list", "--bogus"},
		[]string{"-v", "--", "sandbox", "list", "--help"},
		[]string{"--domain"},
		[]string{"--no-color", "sandboxes", "list"})
	for _, args := range lines {
		lazyCode, lazyOut, lazyErr := runIn(t, args, func(f *cmdutil.Factory) *cobra.Command { return newRunRoot(f, args) })
		if len(lazyOut)+len(lazyErr) == 0 {
			t.Errorf("osb %q printed nothing", args)
		}
		wholeCode, wholeOut, wholeErr := runIn(t, args, NewCmdRoot)
		if lazyCode != wholeCode || lazyOut != wholeOut || lazyErr != wholeErr {
			t.Errorf("osb %q: exit %d, stdout %q, stderr %q; in the whole tree exit %d, stdout %q, stderr %q",
				args, lazyCode, lazyOut, lazyErr, wholeCode, wholeOut, wholeErr)
		}
	}
}

func runIn(t *testing.T, args []string, root func(*cmdutil.Factory) *cobra.Command) (int, string, string) {
	ios, _, out, errOut := iostreams.Test()
	f := cmdutil.New(ios, func(k string) string {
		if k == "HOME" {
			return t.TempDir()
		}
		return ""
	})
	code := run(context.Background(), f, root(f), args)
	return code, out.String(), errOut.String()
}

func testStreams() *iostreams.IOStreams {
	ios, _, _, _ := iostreams.Test()
	return ios
}

// The group is found past the root's flags, and only it is built; a line
// that does not plainly start with a group gets the whole tree.
func TestRunRootBuildsTheNamedGroupAlone(t *testing.T) {
	f := cmdutil.New(testStreams(), func(string) string { return "" })
	whole := len(NewCmdRoot(f).Commands())
	for _, tc := range []struct {
		args []string
		want int // commands under the root
	}{
		{[]string{"sandbox", "list"}, 1},
		{[]string{"--domain", "h:1", "sandbox", "list", "--all"}, 1},
		{[]string{"--domain=h:1", "-v", "--no-color", "--request-timeout", "3", "cp", "a", "b"}, 1},
		{[]string{"--version"}, whole},
		{[]string{"help", "sandbox"}, whole},
		{[]string{"__complete", "sandbox", ""}, whole},
		{[]string{"-v", "--", "sandbox"}, whole},
		{[]string{"-vx", "sandbox"}, whole},
		{[]string{"--domain"}, whole},
		{[]string{"sandboxes"}, whole},
		{nil, whole},
	} {
		if got := len(newRunRoot(f, tc.args).Commands()); got != tc.want {
			t.Errorf("osb %q: %d commands under the root, want %d", tc.args, got, tc.want)
		}
	}
}
