package sandbox

import "testing"

func TestParseLimits(t *testing.T) {
	cases := []struct {
		in   map[string]string
		want Limits
	}{
		{nil, Limits{PIDs: DefaultPIDs}},
		{map[string]string{"cpu": "500m", "memory": "512Mi"}, Limits{CPUs: 0.5, Memory: 512 << 20, PIDs: DefaultPIDs}},
		{map[string]string{"cpu": "2", "memory": "1G", "pids": "64", "gpu": "1"}, Limits{CPUs: 2, Memory: 1e9, PIDs: 64}},
		{map[string]string{"cpu": "0.25", "memory": "1048576"}, Limits{CPUs: 0.25, Memory: 1 << 20, PIDs: DefaultPIDs}},
	}
	for _, c := range cases {
		if got, err := ParseLimits(c.in); err != nil || got != c.want {
			t.Errorf("%v: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []map[string]string{{"cpu": "lots"}, {"cpu": "-1"}, {"memory": "1Xi"}, {"memory": "0"}, {"pids": "0"}, {"pids": "many"}} {
		if _, err := ParseLimits(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// The largest pids cap keeps the cap and the reserve, at 1024 open files
// each, within a quarter of file-max; a request above it is lowered to it.
func TestOpenFilesBoundLowersThePidsCap(t *testing.T) {
	cases := []struct {
		fileMax uint64
		maxPIDs int64
		holds   bool
	}{
		{2466116, 346, true}, // 616529 / 1024 = 602, less 256
		{4 * 1024 * (1000 + 256), 1000, true},
		{1 << 62, 1<<50 - 256, true}, // systemd's LONG_MAX, roughly
		{800000, 64, false},          // too small: the floor
		{0, 0, true},                 // unknown: no bound
	}
	for _, c := range cases {
		b := fileBound(c.fileMax)
		if b.MaxPIDs != c.maxPIDs || b.Holds() != c.holds {
			t.Errorf("file-max %d: largest pids cap %d (holds %v), want %d (%v)", c.fileMax, b.MaxPIDs, b.Holds(), c.maxPIDs, c.holds)
		}
		if c.fileMax == 0 {
			continue
		}
		l := Limits{PIDs: DefaultPIDs}
		was := b.Fit(&l)
		if want := min(DefaultPIDs, c.maxPIDs); l.PIDs != want || (was != 0) != (want < DefaultPIDs) {
			t.Errorf("file-max %d: pids %d lowered to %d (was %d), want %d", c.fileMax, DefaultPIDs, l.PIDs, was, want)
		}
		if n := noFileLimit(l.PIDs, c.fileMax, 1<<20); c.holds && uint64(l.PIDs+pidsReserve)*max(n, minNoFile) > c.fileMax/4 && n != 0 {
			t.Errorf("file-max %d: %d processes of %d files exceed a quarter", c.fileMax, l.PIDs+pidsReserve, n)
		}
	}
}
