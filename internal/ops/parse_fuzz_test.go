package ops

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// renderDuration writes d in the h/m/s form ParseDuration reads.
func renderDuration(d time.Duration) string {
	secs := int64(d / time.Second)
	return fmt.Sprintf("%dh%dm%ds", secs/3600, secs/60%60, secs%60)
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10", "0", "10s", "5m", "2h", "1h30m", "1h30m45s", "90s", " 7m ", "", "abc", "10x", "m10", "-5m", "1h1h", "4294967295h", "99999999999999999999s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 || d%time.Second != 0 {
			t.Fatalf("ParseDuration(%q) = %v: want whole, non-negative seconds", s, d)
		}
		again, err := ParseDuration(renderDuration(d))
		if err != nil || again != d {
			t.Fatalf("ParseDuration(%q) = %v, but its rendering %q parses to %v, %v", s, d, renderDuration(d), again, err)
		}
	})
}

func FuzzParseKeyValue(f *testing.F) {
	for _, s := range []string{"a=b", "a=", "=b", "=", "a=b=c", "x", "", "KEY=multi\nline", "ü=ß"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, v, err := ParseKeyValue(s)
		if err != nil {
			if strings.Contains(s, "=") {
				t.Fatalf("ParseKeyValue(%q) rejected an input holding '=': %v", s, err)
			}
			return
		}
		if strings.Contains(k, "=") {
			t.Fatalf("ParseKeyValue(%q) key %q holds '=': the split must be at the first one", s, k)
		}
		if k+"="+v != s {
			t.Fatalf("ParseKeyValue(%q) = %q, %q: joining them does not give the input back", s, k, v)
		}
		k2, v2, err := ParseKeyValue(k + "=" + v)
		if err != nil || k2 != k || v2 != v {
			t.Fatalf("ParseKeyValue round trip of %q: got %q, %q, %v", s, k2, v2, err)
		}
	})
}
