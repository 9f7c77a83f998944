// Command osb is the OpenSandbox command-line client and local server.
package main

import (
	"os"

	"github.com/osb-dev/osb/internal/commands"
)

func main() {
	os.Exit(commands.Main())
}
