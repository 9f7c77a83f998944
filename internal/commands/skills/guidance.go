package skills

import (
	"fmt"
	"strings"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// guidance is shown with the errors of an incomplete install or uninstall,
// so that an agent can correct the command line from the message alone.
func guidance() string {
	return "How to install skills:\n\n" +
		"  See what is bundled:\n" +
		"    osb skills list\n" +
		"    osb skills show <skill-name>\n\n" +
		"  Install one skill for one tool:\n" +
		"    osb skills install <skill-name> --target <tool> --scope <scope>\n\n" +
		"  Install every bundled skill for one tool:\n" +
		"    osb skills install --all-builtins --target <tool> --scope <scope>\n\n" +
		"  Remove one again:\n" +
		"    osb skills uninstall <skill-name> --target <tool> --scope <scope>\n\n" +
		"  Skills: " + strings.Join(skillNames(), ", ") + "\n" +
		"  Targets: " + strings.Join(targetNames(), ", ") + " (or all)\n" +
		"  Scopes: " + strings.Join(scopes, ", ") + " (project: the current directory; global: your home directory)\n"
}

// guidanceError is a usage error (exit 2) followed by the guidance. In
// table mode it is printed here, because the usual error line is one line;
// under json and yaml the guidance is part of the error object's message.
func guidanceError(f *cmdutil.Factory, format, msg string) error {
	if format == output.Table {
		fmt.Fprintf(f.IOStreams.ErrOut, "Error: %s\n\n%s", msg, guidance())
		return ops.Silent(ops.ExitUsage)
	}
	return ops.UsageErrorf("%s\n\n%s", msg, strings.TrimSuffix(guidance(), "\n"))
}

// checkPlacement reports the guidance error for a missing --target or --scope.
func checkPlacement(f *cmdutil.Factory, format, target, scope string) error {
	switch {
	case target == "":
		return guidanceError(f, format, "--target is required: name the coding tool to write to")
	case scope == "":
		return guidanceError(f, format, "--scope is required: project (this directory) or global (your home directory)")
	}
	return nil
}

// chooseSkills resolves a skill name or --all-builtins to the skills to act on.
func chooseSkills(f *cmdutil.Factory, format, name string, all bool) ([]skill, error) {
	if all {
		return builtinSkills, nil
	}
	if name == "" {
		return nil, guidanceError(f, format, "name a skill, or pass --all-builtins for all of them")
	}
	s, err := lookupSkill(name)
	if err != nil {
		return nil, ops.UsageErrorf("%v", err)
	}
	return []skill{s}, nil
}
