// Package skills holds the skill files that `osb skills install` copies into
// coding agents' instruction folders. They are markdown, embedded in the binary.
package skills

import "embed"

// FS holds every bundled skill file at its base name, e.g.
// "opensandbox-sandbox-lifecycle.md".
//
//go:embed *.md
var FS embed.FS
