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
