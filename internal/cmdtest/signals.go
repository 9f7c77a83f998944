package cmdtest

import "github.com/osb-dev/osb/internal/server/sandbox"

// DefaultChildSignals makes the processes a test starts from now on (osb,
// osb server) begin with the default action for SIGHUP and SIGINT,
// whatever this test binary was started with. A suite run under nohup, or
// in a script's background job, has them ignored; an ignored signal stays
// ignored across exec, and osb then rightly goes on ignoring it, so a test
// that sends it would wait for an end that never comes. TestMain of a
// package whose tests signal the processes they start calls it.
func DefaultChildSignals() { sandbox.DefaultSignals() }
