package skills_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
	bundled "github.com/osb-dev/osb/skills"
)

var skillSlugs = []string{
	"sandbox-troubleshooting", "sandbox-lifecycle", "command-execution",
	"file-operations", "network-egress", "credential-vault", "code-interpreter", "mcp-tools",
}

func skillText(t *testing.T, slug string) string {
	t.Helper()
	b, err := bundled.FS.ReadFile("opensandbox-" + slug + ".md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSkillFrontMatter(t *testing.T) {
	t.Parallel()
	for _, slug := range skillSlugs {
		text := skillText(t, slug)
		head, _, ok := strings.Cut(strings.TrimPrefix(text, "---\n"), "\n---\n")
		if !strings.HasPrefix(text, "---\n") || !ok {
			t.Errorf("%s: no front matter", slug)
			continue
		}
		lines := strings.Split(head, "\n")
		if len(lines) != 2 || lines[0] != "name: "+slug || !strings.HasPrefix(lines[1], "description: ") {
			t.Errorf("%s: front matter must be exactly name and description, got:\n%s", slug, head)
		}
		if desc := strings.TrimPrefix(lines[len(lines)-1], "description: "); len(desc) < 40 || strings.Contains(desc, ": ") {
			// ": " would make the plain YAML scalar invalid.
			t.Errorf("%s: description %q", slug, desc)
		}
	}
}

// Every skill teaches the same basics: exit codes and what to do about
// them, id prefixes, renewal and cleanup, the local server; none uses the
// retired devops inspect/summary.
func TestSkillContent(t *testing.T) {
	t.Parallel()
	for _, slug := range skillSlugs {
		text := skillText(t, slug)
		for _, want := range []string{
			"## When To Use", "## Exit Codes", "| 2 |", "| 3 |", "| 4 |", "| 5 |", "| 6 |", "124", "125", "128+n", "130",
			"osb server", "-o json", "unique prefix", "osb sandbox kill", "osb sandbox renew",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not contain %q", slug, want)
			}
		}
		lower := strings.ToLower(text)
		for _, banned := range []string{"devops inspect", "devops summary"} {
			if strings.Contains(lower, banned) {
				t.Errorf("%s mentions %q", slug, banned)
			}
		}
	}
}

// osbCommand is one osb command line found in a skill.
type osbCommand struct {
	where  string   // file:line
	source string   // the text it came from
	args   []string // after "osb"
	fenced bool     // in a ```bash block (else inline code)
}

// TestSkillCommandsParse checks every osb command in every skill against
// the real command tree: the command exists, its flags exist and take the
// values given, its arguments fit, required flags are there. Placeholders
// such as <sandbox-id> or "$SB" count as arguments. Commands in ```bash
// blocks must also choose an output format with -o, so that an agent
// copying them gets parseable output.
func TestSkillCommandsParse(t *testing.T) {
	t.Parallel()
	total := 0
	for _, slug := range skillSlugs {
		file := "opensandbox-" + slug + ".md"
		cmds, err := osbCommands(file, skillText(t, slug))
		if err != nil {
			t.Error(err)
		}
		if len(cmds) < 5 {
			t.Errorf("%s: only %d osb commands found", file, len(cmds))
		}
		for _, c := range cmds {
			total++
			if err := parseOsb(c.args, !c.fenced); err != nil {
				t.Errorf("%s: osb %s\n    %v", c.where, strings.Join(c.args, " "), err)
			}
			if c.fenced && needsOutputFlag(c.args) && !hasOutputFlag(c.args) {
				t.Errorf("%s: osb %s\n    has no -o: an agent needs -o json (or -o raw for streams)", c.where, strings.Join(c.args, " "))
			}
		}
	}
	t.Logf("%d osb commands checked", total)
}

// TestSkillFlagMentions checks the flags a skill names outside a full
// command line, like `--wait-timeout` or `-t, --timeout DURATION` in a
// table: each must be a flag of some osb command.
func TestSkillFlagMentions(t *testing.T) {
	t.Parallel()
	known := treeFlags()
	for _, slug := range skillSlugs {
		file := "opensandbox-" + slug + ".md"
		for _, bad := range unknownFlagMentions(skillText(t, slug), known) {
			t.Errorf("%s: %s", file, bad)
		}
	}
}

func TestUnknownFlagMentions(t *testing.T) {
	t.Parallel()
	md := "Use `--wait-timeout` and `-t, --timeout DURATION`; `osb x --nope` is a command line.\n" +
		"```bash\nosb sandbox get x --fenced -o json\n```\n" +
		"| `--bogus-flag N` | `-Q` | `--` |\n"
	got := unknownFlagMentions(md, treeFlags())
	want := []string{"line 5: `--bogus-flag N` names no osb flag --bogus-flag", "line 5: `-Q` names no osb flag -Q"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// treeFlags is the set of every flag (--name and -x) of every osb command.
func treeFlags() map[string]bool {
	ios, _, _, _ := iostreams.Test()
	root := commands.NewCmdRoot(cmdutil.New(ios, func(string) string { return "" }))
	known := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				known["--"+f.Name] = true
				if f.Shorthand != "" {
					known["-"+f.Shorthand] = true
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return known
}

var flagWord = regexp.MustCompile(`^(--[a-z][a-z0-9-]*|-[A-Za-z])(=|,|$)`)

// unknownFlagMentions finds inline code spans outside fences that start
// with a flag, and reports each flag word in them that known lacks.
func unknownFlagMentions(md string, known map[string]bool) []string {
	var bad []string
	inFence := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			if !strings.HasPrefix(m[1], "-") {
				continue
			}
			for _, w := range strings.Fields(m[1]) {
				if f := flagWord.FindStringSubmatch(w); f != nil && !known[f[1]] {
					bad = append(bad, fmt.Sprintf("line %d: `%s` names no osb flag %s", i+1, m[1], f[1]))
				}
			}
		}
	}
	return bad
}

// parseOsb resolves args on a fresh command tree and parses them there.
// A mention, inline code naming a command with nothing after it (like
// `osb command run`), only has to name a command that exists.
func parseOsb(args []string, mayMention bool) error {
	ios, _, _, _ := iostreams.Test()
	root := commands.NewCmdRoot(cmdutil.New(ios, func(string) string { return "" }))
	root.InitDefaultHelpCmd()
	root.InitDefaultHelpFlag()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if mayMention && len(rest) == 0 {
		return nil
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		// On a group whose subcommand does not exist (yet), the missing
		// command says more than the flags it does not know.
		if aerr := cmd.ValidateArgs(leadingArgs(rest)); aerr != nil && strings.HasPrefix(aerr.Error(), "unknown command") {
			return aerr
		}
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// leadingArgs are the arguments before the first flag.
func leadingArgs(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			return args[:i]
		}
	}
	return args
}

// needsOutputFlag is false for the commands that have no output to parse:
// version, help and the server.
func needsOutputFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "--version", "-h", "--help":
			return false
		}
	}
	// Commands with no -o at all (server, mcp, help) print no result.
	ios, _, _, _ := iostreams.Test()
	root := commands.NewCmdRoot(cmdutil.New(ios, func(string) string { return "" }))
	cmd, _, err := root.Find(args)
	return err == nil && cmd.Flags().Lookup("output") != nil
}

func hasOutputFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") || (strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--")) {
			return true
		}
	}
	return false
}

var (
	inlineCode = regexp.MustCompile("`([^`\n]+)`")
	// osbWord finds osb at the start of a shell command, to check that the
	// scanner missed none.
	osbWord = regexp.MustCompile(`(^|[\s;&|(])osb(\s|$)`)
)

// osbCommands finds the osb commands of a markdown file: in ```bash
// blocks, and in inline code spans that start with "osb ".
func osbCommands(file, md string) ([]osbCommand, error) {
	var cmds []osbCommand
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		fence, isFence := strings.CutPrefix(strings.TrimSpace(lines[i]), "```")
		if !isFence {
			for _, m := range inlineCode.FindAllStringSubmatch(lines[i], -1) {
				if !strings.HasPrefix(m[1], "osb ") {
					continue
				}
				for _, sc := range shellCommands(m[1]) {
					if len(sc.words) > 0 && sc.words[0] == "osb" {
						cmds = append(cmds, osbCommand{fmt.Sprintf("%s:%d", file, i+1), m[1], sc.words[1:], false})
					}
				}
			}
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		if fence != "bash" {
			continue
		}
		block := strings.Join(lines[start:i], "\n")
		found := 0
		for _, sc := range shellCommands(block) {
			if len(sc.words) > 0 && sc.words[0] == "osb" {
				found++
				cmds = append(cmds, osbCommand{fmt.Sprintf("%s:%d", file, start+sc.line), block, sc.words[1:], true})
			}
		}
		if want := countOsbWords(block); found != want {
			return cmds, fmt.Errorf("%s:%d: the block names osb %d times but %d commands were understood; simplify its shell", file, start, want, found)
		}
	}
	return cmds, nil
}

func countOsbWords(block string) int {
	n := 0
	for _, line := range strings.Split(block, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			n += len(osbWord.FindAllString(line, -1))
		}
	}
	return n
}

// shellCommand is one simple command: its words, without environment
// assignments and redirections, and its line within the text (from 1).
type shellCommand struct {
	words []string
	line  int
}

var (
	envAssign   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	redirect    = regexp.MustCompile(`^[0-9]*(>>|>|<)(&[0-9-]*)?`)
	placeholder = regexp.MustCompile(`^<[A-Za-z0-9_.:/-]+>`)
)

// shellCommands splits shell text into simple commands, the way a shell
// would for the constructs skills use: quotes, backslashes, comments, line
// continuations, | || && ; &, $( ... ), redirections and heredocs. Angle
// brackets around a word, like <sandbox-id>, make a placeholder word.
func shellCommands(src string) []shellCommand {
	var (
		cmds    []shellCommand
		words   []string
		word    strings.Builder
		inWord  bool
		line    = 1
		cmdLine = 1
		heredoc []string // delimiters waiting for the end of the line
	)
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		endWord()
		if w := clean(words); len(w) > 0 {
			cmds = append(cmds, shellCommand{w, cmdLine})
		}
		words = nil
		cmdLine = line
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			i++
			if src[i] == '\n' {
				line++
				continue
			}
			word.WriteByte(src[i])
			inWord = true
		case c == '\'':
			end := strings.IndexByte(src[i+1:], '\'')
			if end < 0 {
				end = len(src) - i - 1
			}
			word.WriteString(src[i+1 : i+1+end])
			line += strings.Count(src[i+1:i+1+end], "\n")
			i += end + 1
			inWord = true
		case c == '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' && i+1 < len(src) && strings.IndexByte("\"\\$`", src[i+1]) >= 0 {
					i++
				}
				if src[i] == '\n' {
					line++
				}
				word.WriteByte(src[i])
			}
			inWord = true
		case c == '#' && !inWord:
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n':
			line++
			endCmd()
			for _, delim := range heredoc {
				// Skip the heredoc's body, through its delimiter line.
				for i+1 < len(src) {
					next := strings.IndexByte(src[i+1:], '\n')
					body := src[i+1:]
					if next >= 0 {
						body = src[i+1 : i+1+next]
					}
					i += len(body) + 1
					line++
					if strings.TrimSpace(body) == delim {
						break
					}
				}
			}
			heredoc = nil
			cmdLine = line
		case c == '<' && strings.HasPrefix(src[i:], "<<"):
			endWord()
			j := i + 2
			if j < len(src) && src[j] == '-' {
				j++
			}
			for j < len(src) && src[j] == ' ' {
				j++
			}
			k := j
			for k < len(src) && strings.IndexByte(" \t\n;|&", src[k]) < 0 {
				k++
			}
			heredoc = append(heredoc, strings.Trim(src[j:k], `'"`))
			i = k - 1
		case c == '<' && !inWord && placeholder.MatchString(src[i:]):
			m := placeholder.FindString(src[i:])
			word.WriteString(m)
			inWord = true
			i += len(m) - 1
		case c == '&' && inWord && strings.ContainsAny(word.String()[max(0, word.Len()-1):], "<>"):
			word.WriteByte(c) // 2>&1
		case c == '(' && inWord && strings.HasSuffix(word.String(), "$"):
			// Command substitution: what came before ends a command.
			s := strings.TrimSuffix(word.String(), "$")
			word.Reset()
			word.WriteString(s)
			inWord = s != ""
			endCmd()
		case strings.IndexByte(";&|()", c) >= 0:
			endCmd()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// clean drops leading environment assignments and every redirection.
func clean(words []string) []string {
	for len(words) > 0 && envAssign.MatchString(words[0]) {
		words = words[1:]
	}
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if m := redirect.FindString(w); m != "" && !placeholder.MatchString(w) {
			if m == w && !strings.Contains(w, "&") {
				i++ // the target is the next word
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

func TestShellCommands(t *testing.T) {
	t.Parallel()
	src := "SB=$(osb sandbox create -i x -o json | jq -r .id)\n" +
		"osb command run \"$SB\" -o raw -- sh -c 'a && b | c' 2>&1 > out.txt # comment\n" +
		"cat <<'EOF' > f\nosb not a command\nEOF\n" +
		"jq -n '{\n  a: 1\n}' | osb x --file - -o json < in.json\n" +
		"osb sandbox kill <sandbox-id> \\\n  -o json & wait\n"
	var got []string
	for _, c := range shellCommands(src) {
		got = append(got, fmt.Sprintf("%d:%s", c.line, strings.Join(c.words, " ")))
	}
	want := []string{
		"1:osb sandbox create -i x -o json", "1:jq -r .id",
		"2:osb command run $SB -o raw -- sh -c a && b | c",
		"3:cat",
		"6:jq -n {\n  a: 1\n}", "8:osb x --file - -o json",
		"9:osb sandbox kill <sandbox-id> -o json", "10:wait",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

func TestParseOsb(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line    string
		mention bool
		bad     string // part of the error, "" when the line is fine
	}{
		{"skills list -o json", false, ""},
		{"--no-color skills show credential-vault -o yaml", false, ""},
		{"--version", false, ""},
		{"help exit-codes", false, ""},
		{"skills install -h", false, ""},
		{"skills install", true, ""},
		{"skills", true, ""},
		{"skills show", false, "missing SKILL"},
		{"skills install sandbox-lifecycle --target vim --scope project", false, "is not one of"},
		{"skills list --long -o json", false, "unknown flag: --long"},
		{"skills nope -o json", false, `unknown command "nope"`},
		{"skills nope", true, `unknown command "nope"`},
		{"skils list", false, "unknown command"},
	} {
		err := parseOsb(strings.Fields(tc.line), tc.mention)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("osb %s: %v", tc.line, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("osb %s: error %v, want one containing %q", tc.line, err, tc.bad)
		}
	}
}

func TestOutputFlagRule(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]bool{
		"sandbox get x -o json":           true,
		"sandbox get x -ojson":            true,
		"sandbox get x --output=yaml":     true,
		"sandbox get x":                   false,
		"command run x -- ls -o":          false,
		"command run x --workdir /o -- a": false,
	} {
		if got := hasOutputFlag(strings.Fields(line)); got != want {
			t.Errorf("hasOutputFlag(%q) = %v", line, got)
		}
	}
	for line, want := range map[string]bool{
		"--version":              false,
		"server --listen a:1":    false,
		"sandbox create --help":  false,
		"help exit-codes":        false,
		"--no-color skills list": true,
	} {
		if got := needsOutputFlag(strings.Fields(line)); got != want {
			t.Errorf("needsOutputFlag(%q) = %v", line, got)
		}
	}
}
