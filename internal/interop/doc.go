// Package interop holds the suite in which clients that this project did not
// write drive `osb server`: the official Python CLI (`opensandbox-cli`), the
// official Python SDK (`opensandbox`) and the official JavaScript SDK
// (`@alibaba-group/opensandbox`). When one of them fails against the server,
// the server is wrong. The suite also compares the official CLI's `-o json`
// output with ours, command by command.
//
// `make interop` installs the clients (scripts/interop-setup) and runs the
// suite with OSB_INTEROP_DIR pointing at them. Without that variable every
// test skips and says how to run it; with it, a missing or broken client is
// a failure, never a skip.
package interop
