package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// completeIDs fills in flag completion for every flag that names ids the
// server can list (arguments complete through the verb builder). Only a
// completion request (cobra's __complete) needs it, so the root calls it
// then rather than walking the whole tree on every run.
func completeIDs(root *cobra.Command, f *cmdutil.Factory) {
	completeIDFlags(root, f)
}

// bashFallbacks stand in for the two bash-completion helpers that cobra's
// bash script calls, where that package is not loaded: without them plain
// bash prints "_get_comp_words_by_ref: command not found" at every Tab.
// Words are split at blanks only, as bash-completion's -n "=:" rejoins
// them, so SANDBOX_ID:PATH and --flag=value stay one word.
const bashFallbacks = `# Plain bash (no bash-completion package): minimal stand-ins for its helpers.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref() {
    local __line="${COMP_LINE:0:COMP_POINT}" __v
    local -a __ws
    read -ra __ws <<< "$__line"
    if [[ ${#__ws[@]} -eq 0 || "$__line" == *[[:space:]] ]]; then __ws+=(""); fi
    while [[ $1 == -* ]]; do
        [[ $1 == -[nic] ]] && shift
        shift
    done
    local __n=${#__ws[@]}
    for __v in "$@"; do
        case $__v in
            cur) cur=${__ws[__n-1]} ;;
            prev) prev=${__ws[__n-2]} ;;
            words) words=("${__ws[@]}") ;;
            cword) cword=$((__n-1)) ;;
        esac
    done
}
fi
if ! declare -F _filedir >/dev/null 2>&1; then
_filedir() {
    local IFS=$'\n'
    if [[ $1 == -d ]]; then
        COMPREPLY=($(compgen -d -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    compopt -o filenames 2>/dev/null
}
fi

`

type completionShell struct {
	name, install string
	write         func(root *cobra.Command, w io.Writer, descriptions bool) error
}

var completionShells = []completionShell{
	{"bash", `Works in plain bash; with the bash-completion package, its helpers are used.
For this shell only:

  source <(osb completion bash)

For every new shell, on Linux:

  osb completion bash > /etc/bash_completion.d/osb

and on macOS with Homebrew:

  osb completion bash > $(brew --prefix)/etc/bash_completion.d/osb`,
		func(root *cobra.Command, w io.Writer, desc bool) error {
			if _, err := io.WriteString(w, bashFallbacks); err != nil {
				return err
			}
			return root.GenBashCompletionV2(w, desc)
		}},
	{"zsh", `If completion is not yet on in zsh, add this to ~/.zshrc first:

  autoload -U compinit; compinit

For this shell only:

  source <(osb completion zsh)

For every new shell, write the script into a directory of $fpath:

  osb completion zsh > "${fpath[1]}/_osb"`,
		func(root *cobra.Command, w io.Writer, desc bool) error {
			if desc {
				return root.GenZshCompletion(w)
			}
			return root.GenZshCompletionNoDesc(w)
		}},
	{"fish", `For this shell only:

  osb completion fish | source

For every new shell:

  osb completion fish > ~/.config/fish/completions/osb.fish`,
		func(root *cobra.Command, w io.Writer, desc bool) error { return root.GenFishCompletion(w, desc) }},
	{"powershell", `For this session only:

  osb completion powershell | Out-String | Invoke-Expression

For every new session, add the line above to your PowerShell profile.`,
		func(root *cobra.Command, w io.Writer, desc bool) error {
			if desc {
				return root.GenPowerShellCompletionWithDesc(w)
			}
			return root.GenPowerShellCompletion(w)
		}},
}

// newCmdCompletion returns `osb completion SHELL`. It needs no config file
// and no server, so it works even when the config file is broken.
func newCmdCompletion(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("completion", "Print the shell completion script for bash, zsh, fish or PowerShell.")
	cmd.Long = `Print a script that teaches your shell to complete osb commands, flags, flag
values and ids. Sandbox, snapshot and template ids are fetched from the
configured server (with a 2-second limit; nothing is offered when the server
cannot be reached), and shown with their state where the shell can show it.

Run 'osb completion SHELL --help' for how to install the script for that shell.`
	cmd.Annotations = map[string]string{cmdutil.NoConfig: ""}
	for _, sh := range completionShells {
		cmd.AddCommand(newCmdCompletionShell(f, sh))
	}
	return cmd
}

type completionOptions struct {
	cmdutil.Base
	NoDescriptions bool
	cmd            *cobra.Command // this command: the script covers its whole tree
}

func newCmdCompletionShell(f *cmdutil.Factory, sh completionShell) *cobra.Command {
	opts := &completionOptions{}
	opts.cmd = cmdutil.NewVerb(f, opts, cmdutil.Verb[completionOptions]{
		Name:  sh.name,
		Short: fmt.Sprintf("Print the completion script for %s.", sh.name),
		Long:  fmt.Sprintf("Print the completion script for %s.\n\n%s", sh.name, sh.install),
		Flags: func(fs *cmdutil.FlagSet) {
			fs.BoolVar(&opts.NoDescriptions, "no-descriptions", false, "Leave out the descriptions shown next to candidates.")
		},
		Run: func(_ context.Context, opts *completionOptions) error {
			return sh.write(opts.cmd.Root(), opts.IOStreams.Out, !opts.NoDescriptions)
		},
	})
	return opts.cmd
}

// idFlags are the flags whose value is an id the server can list, with
// the listing that completes them.
var idFlags = map[string]cmdutil.CompletionLister{
	"sandbox-id":  cmdutil.SandboxCandidates,
	"snapshot-id": cmdutil.SnapshotCandidates,
	"template":    cmdutil.TemplateCandidates,
}

// completeIDFlags gives every id flag (sandbox create --template and
// --snapshot-id, snapshot list --sandbox-id, …) that has no completion of
// its own the server's ids, instead of the shell's local file names.
func completeIDFlags(cmd *cobra.Command, f *cmdutil.Factory) {
	for _, sub := range cmd.Commands() {
		completeIDFlags(sub, f)
	}
	for name, list := range idFlags {
		if cmd.LocalNonPersistentFlags().Lookup(name) == nil {
			continue
		}
		if _, ok := cmd.GetFlagCompletionFunc(name); !ok {
			_ = cmd.RegisterFlagCompletionFunc(name, cmdutil.CompleteListedFlag(f, list))
		}
	}
}
