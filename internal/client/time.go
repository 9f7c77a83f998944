package client

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Time is a timestamp as the server wrote it, printed as the official
// client prints it. The official client reads every time into a Python
// datetime and writes that back out, so the same instant looks the same
// whichever server sent it: microseconds (six digits, or none when they are
// all zero), "Z" for UTC, the server's offset otherwise, no offset when the
// server gave none. Text that is no time is printed as it came.
type Time struct {
	Text string    // as the server sent it
	T    time.Time // its meaning; zero when Text is not a time
}

// NewTime is a time osb computed itself.
func NewTime(t time.Time) Time {
	return Time{Text: t.UTC().Format(time.RFC3339Nano), T: t}
}

// ParseTime reads a server's timestamp; it never fails (see Time).
func ParseTime(text string) Time {
	t, _, _ := parseTime(text)
	return Time{Text: text, T: t}
}

// The forms the official client accepts: RFC 3339 with a T or a space, with
// or without an offset.
var timeLayouts = []struct {
	layout string
	naive  bool
}{
	{"2006-01-02T15:04:05.999999999Z07:00", false},
	{"2006-01-02 15:04:05.999999999Z07:00", false},
	{"2006-01-02T15:04:05.999999999", true},
	{"2006-01-02 15:04:05.999999999", true},
}

func parseTime(text string) (t time.Time, naive, ok bool) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l.layout, text); err == nil {
			return t, l.naive, true
		}
	}
	return time.Time{}, false, false
}

// String is the time as the official client prints it.
func (t Time) String() string {
	parsed, naive, ok := parseTime(t.Text)
	if !ok {
		return t.Text
	}
	var b strings.Builder
	b.WriteString(parsed.Format("2006-01-02T15:04:05"))
	if us := parsed.Nanosecond() / 1000; us != 0 {
		b.WriteByte('.')
		digits := strconv.Itoa(us)
		b.WriteString(strings.Repeat("0", 6-len(digits)) + digits)
	}
	if naive {
		return b.String()
	}
	if _, offset := parsed.Zone(); offset == 0 {
		b.WriteByte('Z')
	} else {
		b.WriteString(parsed.Format("-07:00"))
	}
	return b.String()
}

// UnmarshalJSON keeps the text; a timestamp that is not a time is kept too
// (unknown values are data, not errors).
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = ParseTime(s)
	return nil
}

// MarshalJSON writes the time as the official client prints it.
func (t Time) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// IsZero reports an unset time.
func (t Time) IsZero() bool { return t.Text == "" }
