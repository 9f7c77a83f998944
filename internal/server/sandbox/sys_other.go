//go:build !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// osb server runs sandboxes on Linux only (see serve_other.go of the server
// command); this lets the package build elsewhere, so the rest of osb can
// be developed and tested on any system. Nothing here is ever run.

const (
	sigStop = syscall.Signal(19)
	sigCont = syscall.Signal(18)
)

func groupAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func runAs(*syscall.SysProcAttr, uint32, uint32) {}

func kill(int, syscall.Signal) {}

func startSteady(cmd *exec.Cmd) error { return cmd.Start() }

func startSteadyAs(cmd *exec.Cmd, _ int) error { return cmd.Start() }

func ownNoFile() uint64 { return 0 }
