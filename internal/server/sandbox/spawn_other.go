//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
)

func initAttr(*idRange) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// idRange and idmapper are the host ids of a sandbox (idrange_linux.go):
// nothing here.
type idRange struct{ owner, mapped int }

func takeRange() (*idRange, error) { return &idRange{}, nil }
func (*idRange) release()          {}

type idmapper struct{}

func newIdmapper(*idRange, string) (*idmapper, error) { return &idmapper{}, nil }
func (*idmapper) own(*os.File) error                  { return nil }
func (*idmapper) apply() error                        { return nil }
func (*idmapper) close()                              {}

func idmapThroughInit(int, []*os.File) error { return nil }

func probe() Isolation { return Isolation{Reason: "sandbox namespaces need Linux"} }

func openOwnedDir(string) (*os.File, error) { return nil, errors.New("sandbox namespaces need Linux") }

func (s *Sandbox) listenAgent() (*os.File, error) {
	return nil, errors.New("sandbox namespaces need Linux")
}

// AgentSocket is "" here: no sandbox has an agent.
func (s *Sandbox) AgentSocket() string { return "" }

func openTree(string) (*os.File, error) { return nil, errors.New("sandbox namespaces need Linux") }

// CloseOnExecExcept does nothing here: no sandbox runs on this system.
func CloseOnExecExcept(...int) {}
