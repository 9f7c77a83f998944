package code

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

// defaultLanguage is the language of a run or context that names none, as
// in the official SDKs.
const defaultLanguage = "python"

// languages complete --language: those execd runs on Jupyter kernels.
var languages = []string{"python", "bash", "java", "javascript", "typescript", "go"}

// contextView is one code context as osb prints it.
type contextView struct {
	ID       string `json:"id" table:"1"`
	Language string `json:"language" table:"2"`
}

type contextCreateOptions struct {
	cmdutil.Base
	Sandbox  cmdutil.Sandbox
	Language string
}

func newCmdContextCreate(f *cmdutil.Factory) *cobra.Command {
	opts := &contextCreateOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[contextCreateOptions]{
		Name:  "create",
		Short: "Start a code context (a kernel) and print its id.",
		Long: "Start a kernel of a language in the sandbox and print the id of its context,\n" +
			"for 'osb code run --context'. Variables, imports and definitions stay in it\n" +
			"from one run to the next, until it is deleted.",
		Example: "  osb code context create abc123\n" +
			"  ctx=$(osb code context create abc123 -o json -q id)",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Language, "language", "l", defaultLanguage, "Language of the kernel.")
			fs.Complete("language", languages...)
		},
		Run: runContextCreate,
	})
}

func runContextCreate(ctx context.Context, opts *contextCreateOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	c, err := dp.CreateCodeContext(ctx, opts.Language)
	if err != nil {
		return err
	}
	return opts.Printer().Panel("Code Context Created", contextView(*c))
}

type contextListOptions struct {
	cmdutil.Base
	Sandbox  cmdutil.Sandbox
	Language string
}

func newCmdContextList(f *cmdutil.Factory) *cobra.Command {
	opts := &contextListOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[contextListOptions]{
		Name:    "list",
		Short:   "List the code contexts of a sandbox.",
		Long:    "List the code contexts of a sandbox, of every language or of one.",
		Example: "  osb code context list abc123\n  osb code context list abc123 -l python -o json",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Language, "language", "l", "", "Only the contexts of this language.")
			fs.Complete("language", languages...)
		},
		Run: runContextList,
	})
}

func runContextList(ctx context.Context, opts *contextListOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	list, err := dp.CodeContexts(ctx, opts.Language)
	if err != nil {
		return err
	}
	views := make([]contextView, len(list))
	for i, c := range list {
		views[i] = contextView(c)
	}
	return opts.Printer().List("Code Contexts", views)
}

type contextDeleteOptions struct {
	cmdutil.Base
	Sandbox  cmdutil.Sandbox
	IDs      []string
	Language string
}

func newCmdContextDelete(f *cmdutil.Factory) *cobra.Command {
	opts := &contextDeleteOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[contextDeleteOptions]{
		Name:  "delete",
		Short: "Delete code contexts: by id, or every one of a language.",
		Long: "Shut down the kernels of the given contexts, or with --language and no ids,\n" +
			"of every context of that language. Their state is lost.",
		Example: "  osb code context delete abc123 $ctx\n  osb code context delete abc123 --language python",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.OptionalStringsArg("CONTEXT_ID", &opts.IDs)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Language, "language", "l", "", "Delete every context of this language (no ids then).")
			fs.Complete("language", languages...)
		},
		Run: runContextDelete,
	})
}

func runContextDelete(ctx context.Context, opts *contextDeleteOptions) error {
	switch {
	case len(opts.IDs) == 0 && opts.Language == "":
		return ops.UsageErrorf("name the contexts to delete, or give --language to delete every context of a language")
	case len(opts.IDs) > 0 && opts.Language != "":
		return ops.UsageErrorf("give context ids or --language, not both")
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	if opts.Language != "" {
		if err := dp.DeleteCodeContexts(ctx, opts.Language); err != nil {
			return err
		}
		return opts.Printer().Success("Deleted every " + opts.Language + " context")
	}
	for _, id := range opts.IDs {
		if err := dp.DeleteCodeContext(ctx, id); err != nil {
			return err
		}
		if err := opts.Printer().Success("Deleted context: " + id); err != nil {
			return err
		}
	}
	return nil
}
