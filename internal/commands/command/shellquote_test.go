package command

import "testing"

// The expected texts are what Python's shlex.quote, joined by spaces, gives:
// the official client sends exactly that.
func TestShellJoin(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sh", "-lc", "echo ready"}, `sh -lc 'echo ready'`},
		{[]string{""}, `''`},
		{[]string{"it's"}, `'it'"'"'s'`},
		{[]string{"a_b@c%d+e=f:g,h./i-j"}, `a_b@c%d+e=f:g,h./i-j`},
		{[]string{"a b", "$HOME", "*", "tab\there", "é", "new\nline"}, "'a b' '$HOME' '*' 'tab\there' 'é' 'new\nline'"},
	}
	for _, c := range cases {
		if got := shellJoin(c.args); got != c.want {
			t.Errorf("shellJoin(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
