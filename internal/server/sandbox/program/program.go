// Package program carries cmd/osb-sandbox, the program an isolated
// sandbox's init and execd run, built for the platform osb is built for.
// It is there when osb is built with the tag sandboxprogram after the
// program itself (make build, the release, and the tests' cmdtest.BuildOsb
// do both; see `make sandbox-program`): osb stays one static file, and
// starts the program from memory. Built without it (go install, test
// binaries), Executable is nil and a sandbox runs osb itself again.
package program

// File is the program's file name for GOOS and GOARCH, in this directory.
func File(goos, goarch string) string { return "osb-sandbox_" + goos + "_" + goarch }
