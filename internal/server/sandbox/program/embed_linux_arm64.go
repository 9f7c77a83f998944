//go:build sandboxprogram

package program

import _ "embed"

// Executable is cmd/osb-sandbox for linux/arm64.
//
//go:embed osb-sandbox_linux_arm64
var Executable []byte
