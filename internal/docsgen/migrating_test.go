package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// officialFlags is the official Python client's command tree (1.1.x): each
// command with the long names of its own flags, -h/--help and -o/--output
// left out. A command or flag of osb that is not here is new, and the
// migration guide must say so.
var officialFlags = map[string][]string{
	"osb": {"api-key", "domain", "protocol", "request-timeout", "use-server-proxy", "no-use-server-proxy",
		"config", "verbose", "no-color", "version"},
	"osb sandbox create": {"image", "image-auth-username", "image-auth-password", "template", "snapshot-id", "file",
		"timeout", "env", "metadata", "extension", "resource", "entrypoint", "network-policy-file",
		"credential-proxy", "volumes-file", "skip-health-check", "ready-timeout"},
	"osb sandbox list":     {"state", "metadata", "page", "page-size"},
	"osb sandbox get":      nil,
	"osb sandbox kill":     nil,
	"osb sandbox pause":    nil,
	"osb sandbox resume":   {"skip-health-check", "resume-timeout"},
	"osb sandbox renew":    {"timeout"},
	"osb sandbox endpoint": {"port"},
	"osb sandbox health":   nil,
	"osb sandbox metrics":  {"watch"},
	"osb template create": {"image", "publish", "file", "resource", "entrypoint", "env", "metadata", "format",
		"readiness-probe", "warmup-seconds"},
	"osb template get":                     nil,
	"osb template list":                    {"metadata", "page", "page-size"},
	"osb template delete":                  nil,
	"osb snapshot create":                  {"name"},
	"osb snapshot get":                     nil,
	"osb snapshot list":                    {"sandbox-id", "name", "state", "page", "page-size"},
	"osb snapshot delete":                  nil,
	"osb command run":                      {"background", "workdir", "timeout", "argv"},
	"osb command status":                   nil,
	"osb command logs":                     {"cursor"},
	"osb command interrupt":                nil,
	"osb command session create":           {"workdir"},
	"osb command session run":              {"workdir", "timeout"},
	"osb command session delete":           nil,
	"osb file cat":                         {"encoding"},
	"osb file write":                       {"content", "encoding", "mode", "owner", "group"},
	"osb file upload":                      nil,
	"osb file download":                    nil,
	"osb file rm":                          nil,
	"osb file mv":                          nil,
	"osb file mkdir":                       {"mode", "owner", "group"},
	"osb file rmdir":                       nil,
	"osb file search":                      {"pattern"},
	"osb file info":                        nil,
	"osb file chmod":                       {"mode", "owner", "group"},
	"osb file replace":                     {"old", "new"},
	"osb egress get":                       nil,
	"osb egress patch":                     {"rule"},
	"osb credential-vault create":          {"file"},
	"osb credential-vault get":             nil,
	"osb credential-vault patch":           {"file"},
	"osb credential-vault delete":          nil,
	"osb credential-vault credential list": nil,
	"osb credential-vault credential get":  nil,
	"osb credential-vault binding list":    nil,
	"osb credential-vault binding get":     nil,
	"osb config init":                      {"force"},
	"osb config show":                      nil,
	"osb config set":                       nil,
	"osb diagnostics logs":                 {"scope"},
	"osb diagnostics events":               {"scope"},
	"osb devops logs":                      {"tail", "since"},
	"osb devops inspect":                   nil,
	"osb devops events":                    {"limit"},
	"osb devops summary":                   {"tail", "event-limit"},
	"osb skills install":                   {"all-builtins", "target", "scope", "force"},
	"osb skills uninstall":                 {"target", "scope"},
	"osb skills list":                      nil,
	"osb skills show":                      nil,
	"osb sandbox":                          nil,
	"osb template":                         nil,
	"osb snapshot":                         nil,
	"osb command":                          nil,
	"osb command session":                  nil,
	"osb file":                             nil,
	"osb egress":                           nil,
	"osb credential-vault":                 nil,
	"osb credential-vault credential":      nil,
	"osb credential-vault binding":         nil,
	"osb config":                           nil,
	"osb diagnostics":                      nil,
	"osb devops":                           nil,
	"osb skills":                           nil,
}

// Every command and flag osb has that the official client lacks is in the
// migration guide's list of new commands and flags, so that the guide
// cannot fall behind the code.
func TestMigratingListsEveryNewCommandAndFlag(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(docsDir, "migrating.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## New commands and flags\n")
	if !ok {
		t.Fatal("migrating.md has no \"## New commands and flags\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := strings.Split(section, "\n")
	// listed reports whether a row names the command and, when given, the
	// flag by its long or short name.
	listed := func(path string, fl *pflag.Flag) bool {
		for _, row := range rows {
			if !strings.Contains(row, "`"+path) {
				continue
			}
			if fl == nil || hasWord(row, "--"+fl.Name) || (fl.Shorthand != "" && hasWord(row, "-"+fl.Shorthand)) {
				return true
			}
		}
		return false
	}
	walk(NewTree(), func(c *cobra.Command) {
		flags, official := officialFlags[c.CommandPath()]
		if !official {
			// A new command covers the commands under it.
			_, parentOfficial := officialFlags[c.Parent().CommandPath()]
			if (parentOfficial || !c.Parent().HasParent()) && !listed(displayPath(c), nil) {
				t.Errorf("%s is new, but migrating.md does not list it under \"New commands and flags\"", displayPath(c))
			}
			return
		}
		c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			if !outputFlags[fl.Name] && !slices.Contains(flags, fl.Name) && !listed(c.CommandPath(), fl) {
				t.Errorf("%s --%s is new, but migrating.md does not list it under \"New commands and flags\"", c.CommandPath(), fl.Name)
			}
		})
	})
}

// outputFlags are the flags every verb with a result gets from the verb
// builder; the guide lists them once, not per command.
var outputFlags = map[string]bool{"help": true, "output": true, "query": true, "jq": true, "template": true, "output-template": true}

// hasWord reports whether s holds word with no letter, digit or dash
// either side of it.
func hasWord(s, word string) bool {
	for i := strings.Index(s, word); i >= 0; {
		end := i + len(word)
		if (i == 0 || !isWordByte(s[i-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		next := strings.Index(s[i+1:], word)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '-' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
