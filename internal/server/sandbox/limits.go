package sandbox

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limits are the resources one sandbox may use, enforced with cgroups
// (cgroup_linux.go). Zero means no limit of that kind.
type Limits struct {
	CPUs   float64 // CPU time, in CPUs (0.5: half of one)
	Memory int64   // bytes of memory (and no swap beyond it)
	PIDs   int64   // processes and threads at once
}

// DefaultPIDs caps the processes of a sandbox whose request names no cap:
// enough for builds and test runners, small enough that a fork bomb stays
// the sandbox's own problem.
const DefaultPIDs = 4096

// ParseLimits reads a create request's resourceLimits, Kubernetes-style:
// cpu "500m", "0.5" or "2"; memory "512Mi", "1G" or bytes; pids a count.
// Other keys (gpu...) are left alone.
func ParseLimits(m map[string]string) (Limits, error) {
	l := Limits{PIDs: DefaultPIDs}
	var err error
	if v, ok := m["cpu"]; ok {
		if l.CPUs, err = parseCPU(v); err != nil {
			return l, err
		}
	}
	if v, ok := m["memory"]; ok {
		if l.Memory, err = parseBytes(v); err != nil {
			return l, err
		}
	}
	if v, ok := m["pids"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 1 {
			return l, fmt.Errorf("resourceLimits.pids %q is not a positive count", v)
		}
		l.PIDs = n
	}
	return l, nil
}

func parseCPU(v string) (float64, error) {
	s := strings.TrimSpace(v)
	scale := 1.0
	if t, ok := strings.CutSuffix(s, "m"); ok {
		s, scale = t, 0.001
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("resourceLimits.cpu %q is not a CPU quantity (e.g. 500m, 0.5, 2)", v)
	}
	return f * scale, nil
}

var byteSuffixes = []struct {
	suffix string
	mult   float64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

func parseBytes(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := 1.0
	for _, b := range byteSuffixes {
		if t, ok := strings.CutSuffix(s, b.suffix); ok {
			s, mult = t, b.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("resourceLimits.memory %q is not a memory quantity (e.g. 512Mi, 2Gi)", v)
	}
	return int64(f * mult), nil
}
