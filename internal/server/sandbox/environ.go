package sandbox

// Environ is the environment, as KEY=VALUE entries, of a process started by
// Command with spec.Env = extra. The execd API expands variables in a
// command's working directory against it.
func (s *Sandbox) Environ(extra map[string]string) []string { return s.processEnv(extra) }
