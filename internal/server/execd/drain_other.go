//go:build !linux

package execd

import "os"

// pipeBuffered is unknown off Linux: output still in the pipe when the
// command exits is read only within drainGrace.
func pipeBuffered(*os.File) int64 { return 0 }

// growPipe cannot change a pipe's size off Linux.
func growPipe(*os.File) bool { return false }
