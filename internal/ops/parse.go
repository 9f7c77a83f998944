package ops

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/config"
)

var durationRE = regexp.MustCompile(`^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$`)

// ParseDuration reads the official client's durations: 1h30m, 10m, 90s, or a
// bare number of seconds. Units must come in h, m, s order.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("duration cannot be empty")
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	m := durationRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("invalid duration '%s'. Use format like 10m, 1h30m, 90s", s)
	}
	var total time.Duration
	for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseUint(m[i+1], 10, 32)
		// Hours and minutes can overflow time.Duration long before 32 bits do.
		if err != nil || time.Duration(n) > (math.MaxInt64-total)/unit {
			return 0, fmt.Errorf("invalid duration '%s': number too large", s)
		}
		total += time.Duration(n) * unit
	}
	return total, nil
}

// ParseOptionalDuration is ParseDuration that also takes "none" (any case),
// returned as nil: no timeout, manual cleanup.
func ParseOptionalDuration(s string) (*time.Duration, error) {
	if strings.EqualFold(strings.TrimSpace(s), "none") {
		return nil, nil
	}
	d, err := ParseDuration(s)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// ParseKeyValue splits KEY=VALUE at the first '='; key and value may be empty.
func ParseKeyValue(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("expected KEY=VALUE format, got '%s'", s)
	}
	return key, value, nil
}

func init() {
	config.ValidateDuration = func(s string) error {
		_, err := ParseDuration(s)
		return err
	}
	config.ValidateDomain = client.CheckDomain
}
