package diagnostics

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

func newCmdEvents(f *cmdutil.Factory) *cobra.Command {
	return newCmdFetch(f, fetchKind{
		kind:  client.DiagnosticEvents,
		title: "Diagnostic Events",
		short: "Show a sandbox's diagnostic events for a scope.",
		scopeHelp: "Diagnostic event scope. Built-in server scopes: runtime (the sandbox's state\n" +
			"changes with their times) and all; other scopes are server-defined.",
		example: "  osb diagnostics events 3f2a --scope runtime",
	})
}
