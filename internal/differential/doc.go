// Package differential holds the suite that makes the real OpenSandbox the
// judge of `osb server`: one list of scenarios (osb command lines, run by the
// built osb binary as separate processes) runs against the official server
// with Docker and the real execd (started by ../shared/peers/opensandbox/
// realstack.sh) and against `osb server`, and every difference in exit codes,
// stdout, stderr or JSON fails, after ids, timestamps, durations, host names
// and ports are normalised, unless docs/server.md lists it, with its reason,
// in the table "Where osb server differs from OpenSandbox".
//
// The package has tests only; `make differential` runs them.
package differential
