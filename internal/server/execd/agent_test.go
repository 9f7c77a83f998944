package execd_test

// Linking the agent lets this test binary be the agent of the isolated
// sandboxes the tests start (see startSandbox).
import _ "github.com/osb-dev/osb/internal/server/agent"
