// Command osb-sandbox is what runs inside an isolated sandbox of osb
// server: its init and its execd (packages sandbox and agent take over from
// their init functions, by the environment the server sets). It links
// nothing else, so each sandbox's two long-lived processes start fast and
// stay small. osb carries it (package program) and starts it itself; run
// by hand it only says so.
package main

import (
	"fmt"
	"os"

	_ "github.com/osb-dev/osb/internal/server/agent"
)

func main() {
	fmt.Fprintln(os.Stderr, "osb-sandbox: the init and execd of osb server's sandboxes; osb server starts it, not a user")
	os.Exit(2)
}
