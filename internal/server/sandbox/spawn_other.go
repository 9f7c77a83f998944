//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
)

func initAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

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
