//go:build linux

// Command pair times two shell commands in turn, A B A B …, and prints
// the medians of each one's wall time, CPU time (user + system) and peak
// RSS, with the median of the pairwise wall-time ratios A/B. Taking the
// ratio pair by pair keeps it meaningful when a shared machine's speed
// drifts during the run.
//
//	pair [-n RUNS] [-warmup N] [-timeout DURATION] [-settle DURATION] COMMAND-A COMMAND-B
//
// Each command runs as `bash -c COMMAND` (functions exported with export -f
// are there), its output thrown away. With -settle, each run waits that
// long, untimed, before it starts: a server that still works after it has
// answered (osb server makes its next spare sandbox after a create) is
// idle again whichever side runs next. CPU time and peak RSS are the
// kernel's accounting of the finished bash and everything it waited for.
// Output, one line:
//
//	WALL_A CPU_A RSS_A WALL_B CPU_B RSS_B RATIO
//
// in seconds, seconds and KiB. A run that exits non-zero or outlives the
// timeout stops it: the reason and the end of that run's stderr go to
// stderr, and the exit status is 1.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// sample is one finished run.
type sample struct {
	wall, cpu float64 // seconds
	rss       int64   // KiB
}

func main() {
	runs := flag.Int("n", 5, "counted pairs")
	warmup := flag.Int("warmup", 1, "pairs run first and not counted")
	timeout := flag.Duration("timeout", 10*time.Minute, "bound on each run")
	settle := flag.Duration("settle", 0, "untimed pause before each run")
	flag.Parse()
	if flag.NArg() != 2 || *runs < 1 || *warmup < 0 {
		fmt.Fprintln(os.Stderr, "usage: pair [-n RUNS] [-warmup N] [-timeout DURATION] [-settle DURATION] COMMAND-A COMMAND-B")
		os.Exit(2)
	}
	a, b, err := pairs(flag.Arg(0), flag.Arg(1), *runs, *warmup, *timeout, *settle)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ratios := make([]float64, len(a))
	for i := range a {
		ratios[i] = a[i].wall / max(b[i].wall, 1e-9)
	}
	ma, mb := medians(a), medians(b)
	fmt.Printf("%.6f %.6f %d %.6f %.6f %d %.4f\n", ma.wall, ma.cpu, ma.rss, mb.wall, mb.cpu, mb.rss, median(ratios))
}

// pairs runs warmup+runs pairs and returns the counted samples of each.
func pairs(cmdA, cmdB string, runs, warmup int, timeout, settle time.Duration) (a, b []sample, err error) {
	for i := range warmup + runs {
		time.Sleep(settle)
		sa, err := run(cmdA, timeout)
		if err != nil {
			return nil, nil, fmt.Errorf("osb side, run %d: %w", i+1, err)
		}
		time.Sleep(settle)
		sb, err := run(cmdB, timeout)
		if err != nil {
			return nil, nil, fmt.Errorf("baseline side, run %d: %w", i+1, err)
		}
		if i >= warmup {
			a, b = append(a, sa), append(b, sb)
		}
	}
	return a, b, nil
}

// run times one `bash -c cmd`.
func run(cmd string, timeout time.Duration) (sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	// Its own process group, so a timeout kills what it started too.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err := c.Run()
	wall := time.Since(start).Seconds()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return sample{}, fmt.Errorf("still running after %s%s", timeout, tail(stderr.String()))
	}
	if err != nil {
		return sample{}, fmt.Errorf("%v%s", err, tail(stderr.String()))
	}
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return sample{wall: wall, cpu: cpu, rss: ru.Maxrss}, nil
}

// tail is the last few lines of a failed run's stderr, as one line.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	lines = lines[max(0, len(lines)-3):]
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return ": " + strings.Join(lines, " / ")
}

func medians(s []sample) sample {
	var wall, cpu, rss []float64
	for _, x := range s {
		wall, cpu, rss = append(wall, x.wall), append(cpu, x.cpu), append(rss, float64(x.rss))
	}
	return sample{wall: median(wall), cpu: median(cpu), rss: int64(median(rss))}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
