//go:build !sandboxprogram || !linux || !(amd64 || arm64)

package program

// Executable is nil: osb was built without the program (see the package
// comment), or for a platform whose sandboxes do not run it.
var Executable []byte
