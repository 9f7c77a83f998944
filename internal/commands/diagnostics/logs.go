package diagnostics

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdLogs(f *cmdutil.Factory) *cobra.Command {
	return newCmdFetch(f, fetchKind{
		kind:  client.DiagnosticLogs,
		title: "Diagnostic Logs",
		short: "Show a sandbox's diagnostic logs for a scope.",
		scopeHelp: "Diagnostic log scope. Built-in server scopes: container (the entrypoint's output)\n" +
			"and all; other scopes are server-defined.",
		example: "  osb diagnostics logs 3f2a --scope container\n  osb diagnostics logs 3f2a -s all -o json",
	})
}
