package cmdutil

import (
	"errors"
	"github.com/osb-dev/osb/internal/ops"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggestDistance is how many edits away a name may be and still be
// suggested for a mistyped word of four letters or more.
const suggestDistance = 2

// nearNames returns the candidates close to word: a candidate that word
// starts or that is at most suggestDistance edits from it, nearest first.
func nearNames(word string, candidates []string) []string {
	type near struct {
		name string
		dist int
	}
	var found []near
	seen := map[string]bool{}
	lw := strings.ToLower(word)
	limit := suggestDistance
	if len(lw) < 4 {
		limit = 1 // two edits turn any short word into another: rm into ls
	}
	for _, c := range candidates {
		if seen[c] || c == "" {
			continue
		}
		d := editDistance(lw, strings.ToLower(c))
		if d <= limit || (len(lw) > 1 && strings.HasPrefix(strings.ToLower(c), lw)) {
			seen[c] = true
			found = append(found, near{c, d})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dist < found[j].dist })
	names := make([]string, len(found))
	for i, n := range found {
		names[i] = n.name
	}
	return names
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// subcommandSuggestions are the subcommands and help topics of cmd that
// word may have meant. A command's SuggestFor names the words of other
// tools that mean it (sandbox rm, sandbox delete: kill).
func subcommandSuggestions(cmd *cobra.Command, word string) []string {
	var wanted []string
	for _, c := range cmd.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			continue
		}
		for _, s := range c.SuggestFor {
			if strings.EqualFold(s, word) {
				wanted = append(wanted, c.Name())
			}
		}
	}
	type near struct {
		name string
		dist int
	}
	var found []near
	for _, c := range cmd.Commands() {
		if c.Hidden || c.Name() == "help" || strings.HasPrefix(c.Name(), "__") {
			continue
		}
		// A command is suggested once, by its name, when it or an alias is near.
		best := -1
		for _, n := range append([]string{c.Name()}, c.Aliases...) {
			if m := nearNames(word, []string{n}); len(m) > 0 {
				if d := editDistance(strings.ToLower(word), strings.ToLower(n)); best < 0 || d < best {
					best = d
				}
			}
		}
		if best >= 0 {
			found = append(found, near{c.Name(), best})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dist < found[j].dist })
	for _, n := range found {
		wanted = append(wanted, n.name)
	}
	return wanted
}

// didYouMean is ". Did you mean "a" or "b"?" for the names, or "".
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	seen := map[string]bool{}
	var quoted []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			quoted = append(quoted, strconv.Quote(n))
		}
	}
	return ". Did you mean " + strings.Join(quoted, " or ") + "?"
}

// UnknownFlag adds the nearest flag names of cmd to pflag's "unknown flag:
// --imge" error; any other flag error comes back as a FlagError unchanged.
func UnknownFlag(cmd *cobra.Command, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return &ops.FlagError{Err: err}
	}
	word := strings.TrimPrefix(msg, prefix)
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	near := nearNames(word, names)
	if len(near) == 0 {
		return &ops.FlagError{Err: err}
	}
	for i, n := range near {
		near[i] = "--" + n
	}
	return &ops.FlagError{Err: errors.New(msg + didYouMean(near))}
}
