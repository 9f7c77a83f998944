//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// CgroupSupport tells whether sandboxes can get resource limits here.
type CgroupSupport struct {
	Available bool
	Version   int
	Reason    string
}

// Cgroups reports that there are none: sandboxes need Linux for limits.
func Cgroups() CgroupSupport { return CgroupSupport{Reason: "resource limits need Linux cgroups"} }

type cgroup struct{}

func newCgroup(string, Limits) (*cgroup, error) {
	return nil, errors.New("resource limits need Linux cgroups")
}

func (*cgroup) add(int) error { return nil }

func (*cgroup) limit(Limits) error { return nil }

func (*cgroup) remove() error { return nil }

func (*cgroup) reserveFiles() (procs, reserve *os.File, err error) { return nil, nil, nil }

func (*cgroup) usage() (float64, uint64, bool) { return 0, 0, false }

// ReleaseCgroups does nothing: there are no cgroups here.
func ReleaseCgroups() {}

func (*cgroup) memoryLimit() uint64 { return 0 }

func (*cgroup) metricsMounts() map[string]string { return nil }

func insideCgroup() *cgroup { return nil }

func (*cgroup) members() ([]int, bool) { return nil, false }

func (*cgroup) joinFiles() []string { return nil }
