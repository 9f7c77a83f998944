package cmdutil

import (
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"
)

// CompleteSandboxPaths completes an argument that is SANDBOX_ID:PATH or a
// local path. Before a colon it offers the sandboxes as "ID:" (and the
// names here that start the same way, since the word may be either);
// after "ID:" the entries of the remote directory being typed, one
// listing of the files API. A word that can only be local (it has a
// slash, starts with a dot or a tilde, or is "-") keeps the shell's own
// file completion, and so does any word when no sandbox matches.
func CompleteSandboxPaths(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if p := parseSandboxPath(f, toComplete); p.Remote() {
			return remotePaths(cmd, f, p.Sandbox.ID, p.Path), cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
		}
		if toComplete == "-" || strings.ContainsAny(toComplete, `/\`) || strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "~") {
			return nil, cobra.ShellCompDirectiveDefault
		}
		ids := listed(cmd, f, SandboxCandidates, toComplete, nil)
		if len(ids) == 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		out := make([]cobra.Completion, 0, len(ids))
		for _, c := range ids {
			id, desc, _ := strings.Cut(c, "\t")
			out = append(out, cobra.CompletionWithDesc(id+":", desc))
		}
		// The shell offers no files once there are candidates: add the
		// local names that fit, as a directory listing of the cwd is cheap.
		entries, _ := os.ReadDir(".")
		for _, e := range entries {
			if name := e.Name(); strings.HasPrefix(name, toComplete) && !strings.HasPrefix(name, ".") {
				if e.IsDir() {
					name += "/"
				}
				out = append(out, name)
			}
		}
		return out, cobra.ShellCompDirectiveNoSpace
	}
}

// remotePaths lists the remote directory of typed (up to its last slash)
// within the completion budget and offers its entries that start with the
// rest, as id:path, directories with a trailing slash. A relative or empty
// path is offered the root. Any failure offers nothing.
func remotePaths(cmd *cobra.Command, f *Factory, id, typed string) []cobra.Completion {
	slash := strings.LastIndex(typed, "/")
	if slash < 0 {
		if typed == "" {
			return []cobra.Completion{id + ":/"}
		}
		return nil
	}
	dir, base := typed[:slash+1], typed[slash+1:]
	ctx, cancel := completionContext(cmd, f)
	defer cancel()
	dp, err := Sandbox{ID: id, f: f}.Execd(ctx)
	if err != nil {
		return nil
	}
	infos, err := dp.ListDirectory(ctx, dir, 1)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, fi := range infos {
		name := path.Base(fi.Path)
		hidden := strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")
		if path.Dir(fi.Path) != path.Clean(dir) || !strings.HasPrefix(name, base) || hidden {
			continue
		}
		if fi.Type == "directory" {
			name += "/"
		}
		out = append(out, id+":"+dir+name)
	}
	return out
}
