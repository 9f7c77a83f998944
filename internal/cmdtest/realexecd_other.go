//go:build !linux

package cmdtest

import "testing"

// RealExecdSandbox: see realexecd.go.
const RealExecdSandbox = "real-execd"

// RealExecd skips: the real execd binary is built for linux/amd64 only.
func RealExecd(t testing.TB) *Env {
	t.Skip("the real execd binary is built for linux/amd64 only")
	return nil
}
