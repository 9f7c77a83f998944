//go:build sandboxprogram

package program

import _ "embed"

// Executable is cmd/osb-sandbox for linux/amd64.
//
//go:embed osb-sandbox_linux_amd64
var Executable []byte
